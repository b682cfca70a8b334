"""A local RunPod: the demo mode and the tests run against it over the real protocols."""
