"""A job's command as podtui shows it: the credentials it carries masked (`HF_TOKEN=hf_... python train.py`,
`--api-key sk-...`), by the rule podtui hides env values by (`podtui.core.pod.looks_like_credential`,
docs/jobs.md#the-cli). The command itself is kept as typed, on the pod; only what is shown is masked. And whether it
sends its work to the background, which ends the job at once."""

from __future__ import annotations

import re

from podtui.core import secret
from podtui.core.pod import credential_by_name, credential_by_value, looks_like_credential

MASK = "••••••"
_VALUE = r"(\"[^\"]*\"|'[^']*'|[^\s;&|()<>]+)"
_ASSIGN = re.compile(r"(?<![\w-])([A-Za-z_][A-Za-z0-9_]*)=" + _VALUE)  # NAME=VALUE
_FLAG = re.compile(r"(?<!\S)--?([A-Za-z][A-Za-z0-9_.-]*)(?:=|[ \t]+)" + _VALUE)  # --name VALUE, --name=VALUE
_WORD = re.compile(_VALUE)


def _unquoted(span: str) -> tuple[int, int]:
    """Where the value is inside `span` (its quotes left out)."""
    return (1, len(span) - 1) if len(span) >= 2 and span[0] == span[-1] and span[0] in "'\"" else (0, len(span))


def _spans(command: str) -> list[tuple[int, int]]:
    found: list[tuple[int, int]] = []

    def take(match: re.Match[str], group: int, secret_by: bool) -> None:
        a, b = _unquoted(match[group])
        value = match[group][a:b]
        if secret_by and value and not value.startswith(("$", "-")):
            found.append((match.start(group) + a, match.start(group) + b))

    for m in _ASSIGN.finditer(command):
        take(m, 2, looks_like_credential(m[1], _value(m[2])))
    for m in _FLAG.finditer(command):
        take(m, 2, credential_by_name(m[1], _value(m[2])))
    for m in _WORD.finditer(command):  # a token by its form, whatever names it (after NAME= or --name=, the value)
        word = m[1]
        cut = word.rfind("=") + 1 if word[:1] not in "'\"" else 0
        a, b = _unquoted(word[cut:])
        if credential_by_value(word[cut + a : cut + b]):
            found.append((m.start(1) + cut + a, m.start(1) + cut + b))
    return found


def _value(span: str) -> str:
    a, b = _unquoted(span)
    return span[a:b]


def masked_command(command: str) -> str:
    """`command` with each value that looks like a credential replaced by a mask."""
    out, at = [], 0
    for start, end in sorted(_spans(command)):
        if start < at:
            start = at
        if start >= end:
            continue
        out += [command[at:start], MASK]
        at = end
    return "".join([*out, command[at:]])


def register_command_secrets(command: str) -> None:
    """The credentials in `command`, registered as secrets: a log line that quotes one shows it masked."""
    for start, end in _spans(command):
        secret.register(command[start:end])


def in_background(command: str) -> bool:
    """The command ends with a lone `&` (`nohup python train.py &`): its shell starts it and ends at once, and the job
    with it, while what it started goes on (docs/jobs.md#the-runner)."""
    tail = command.rstrip()
    return tail.endswith("&") and not tail.endswith(("&&", "\\&", ">&", "|&"))
