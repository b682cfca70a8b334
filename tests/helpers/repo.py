"""This checkout: where tests run `python -m podtui` from and find the project's files."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
