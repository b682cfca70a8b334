"""podtui: a terminal app for people who rent GPU pods on RunPod."""

__version__ = "0.1.0"
