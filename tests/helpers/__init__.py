"""What tests share that is not a fixture (fixtures live in the conftest.py files): each module is named after what
it helps with. No test module imports another test module or a conftest; they import from here."""
