"""Detached jobs on pods (docs/jobs.md)."""
