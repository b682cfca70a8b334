"""The account's secrets as a pod's container sees them (docs/runpod-facts.md#templates).

An env value may hold `{{ RUNPOD_SECRET_<name> }}`: RunPod keeps the reference as written in every answer and puts
the secret's value in its place only in the container's environment, when the container starts. A variable that
refers to a name the account has no secret for is left unset in the container.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

REFERENCE = re.compile(r"\{\{\s*RUNPOD_SECRET_([A-Za-z0-9_.-]+)\s*\}\}")


def referenced(env: Mapping[str, str]) -> set[str]:
    """The secret names the env's values refer to."""
    return {m.group(1) for value in env.values() for m in REFERENCE.finditer(value)}


def resolve(env: Mapping[str, str], values: Mapping[str, str]) -> dict[str, str]:
    """The env with each reference replaced by its secret's value; without the variables that refer to a secret
    the account does not have."""

    def one(m: re.Match[str]) -> str:
        return values[m.group(1)]

    return {
        key: REFERENCE.sub(one, value)
        for key, value in env.items()
        if all(name in values for name in referenced({key: value}))
    }
