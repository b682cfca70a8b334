"""Tracebacks safe to write down: no local variables, every registered secret masked, no control characters.

Textual's own crash report prints every frame's locals, and podtui's locals hold pods with their environment
(tokens in clear). podtui's report keeps what a bug report needs, where it happened and what was raised, and
nothing else. See docs/architecture.md#crashes.
"""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any

from podtui.core.secret import redact
from podtui.core.visible import visible

_MAX_CHAIN = 8  # causes and contexts followed; a cycle or a long chain must not grow the report without bound


def _exception_line(exc: BaseException) -> str:
    name = type(exc).__qualname__
    module = type(exc).__module__
    if module not in ("builtins", "__main__"):
        name = f"{module}.{name}"
    try:
        text = str(exc)
    except Exception:  # an exception whose __str__ fails must not take the report down with it
        text = "<unprintable>"
    return f"{name}: {visible(redact(text))}" if text else name


def format_exception(exc: BaseException) -> str:
    """The traceback of `exc` and the exceptions it chains to, in Python's order (the cause first)."""
    chain: list[tuple[BaseException, str | None]] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    link: str | None = None
    while current is not None and id(current) not in seen and len(chain) < _MAX_CHAIN:
        seen.add(id(current))
        chain.append((current, link))
        if current.__cause__ is not None:
            current, link = current.__cause__, "The above exception was the direct cause of the following exception:"
        elif current.__context__ is not None and not current.__suppress_context__:
            current, link = current.__context__, "During handling of the above exception, another exception occurred:"
        else:
            current = None
    lines: list[str] = []
    for i, (e, _) in enumerate(reversed(chain)):
        if i:
            # the link text belongs to the exception that follows it in reading order
            lines += ["", chain[len(chain) - i][1] or "", ""]
        if e.__traceback__ is not None:
            lines.append("Traceback (most recent call last):")
            for frame in traceback.extract_tb(e.__traceback__):
                # file names and code come from podtui's installation, but a path can hold anything
                lines.append(f'  File "{visible(frame.filename)}", line {frame.lineno}, in {visible(frame.name)}')
                if frame.line:
                    lines.append(f"    {visible(frame.line.strip())}")
        lines.append(_exception_line(e))
    return "\n".join(lines)


def one_line(exc: BaseException | str, log: Path | None) -> str:
    """What the terminal gets after a crash: what happened (the exception, or its type's name), where the details
    are; never the exception's text."""
    kind = exc if isinstance(exc, str) else type(exc).__name__
    details = f"the details are in {visible(str(log))}" if log is not None else "no log file was set up"
    return f"podtui stopped on an unexpected error ({visible(kind)}); {details}"


def summarise_trace(trace: Any) -> tuple[str, str]:
    """(exception type, one safe line) from a traceback rich already extracted (a `rich.traceback.Trace`: what
    Textual's input thread hands over), without its locals: where it happened and what was raised."""
    stacks = getattr(trace, "stacks", None) or []
    if not stacks:
        return "Exception", "no details"
    last = stacks[0]  # rich lists the exception that escaped first, then its causes
    frames = getattr(last, "frames", None) or []
    where = f" at {visible(frames[-1].filename)}:{frames[-1].lineno} in {visible(frames[-1].name)}" if frames else ""
    kind = str(getattr(last, "exc_type", "Exception"))
    return kind, f"{visible(kind)}: {visible(redact(str(getattr(last, 'exc_value', ''))))}{where}"
