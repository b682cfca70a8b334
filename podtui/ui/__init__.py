"""The Textual UI: a small App, its screens and widgets."""
