"""The create form's environment box: the lines it may show, and the values kept out of it and sent as they are
(credentials, and keys or values a text box would draw raw)."""

from __future__ import annotations

from collections.abc import Sequence

from podtui.core import secret
from podtui.core.pod import redact_env
from podtui.core.visible import visible

Env = tuple[tuple[str, str], ...]


def shown_env(pairs: Sequence[tuple[str, str]]) -> tuple[str, Env]:
    """Env from a template or a spec: the lines a text box may show, and the pairs kept out of it (credentials,
    and keys or values with line breaks or control characters, which a text box would draw raw), sent as they
    are."""
    lines: list[str] = []
    kept: list[tuple[str, str]] = []
    for (key, value), (_, redacted) in zip(pairs, redact_env(tuple(pairs)), strict=True):
        if redacted != value or visible(value) != value or visible(key) != key:
            secret.register(value)
            kept.append((key, value))
        else:
            lines.append(f"{key}={value}")
    return "\n".join(lines), tuple(kept)


def env_key(line: str) -> str:
    return line.partition("=")[0].strip()


def box_lines(text: str) -> tuple[str, ...]:
    """The box's lines that say something."""
    return tuple(line for line in text.splitlines() if line.strip())


def sent_env(hidden: Env, typed: Env) -> Env:
    """What was typed, and the values kept out of the box (what was typed wins for the same key)."""
    keys = {k for k, _ in typed}
    return (*((k, v) for k, v in hidden if k not in keys), *typed)


def hidden_words(hidden: Env) -> str:
    """The note under the box: which keys are sent without being shown."""
    kept = [k for k, _ in hidden]
    return f"also sent, not shown: {', '.join(kept)}" if kept else ""
