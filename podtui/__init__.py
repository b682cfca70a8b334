"""podtui: a terminal app for people who rent GPU pods on RunPod."""

import logging

__version__ = "0.1.0"

# A library stays quiet unless its user configures logging; the CLI sends podtui's logs to a file.
logging.getLogger("podtui").addHandler(logging.NullHandler())
