"""The one sanitiser for text podtui did not write itself (pod names, API errors, file names, shell output).

Every control character, C1 control, line or paragraph separator, bidi control and lone surrogate becomes a
visible, inert escape (`\\x1b`, `<U+202E>`); everything printable is kept as it is. It works character by
character, with no notion of an escape *sequence*, so nothing can be built to survive it: what comes out holds
no byte a terminal acts on, whatever went in, and however the text is cut into pieces before it is written.
See docs/architecture.md#text-from-outside.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from typing import Any, TypeVar

T = TypeVar("T")

# C0 controls and DEL; C1 controls (U+0080..U+009F: 8-bit CSI/OSC to terminals that honour them); the line and
# paragraph separators; the bidi controls (U+061C, LRM/RLM, the embeddings and overrides, the isolates); lone
# surrogates, which is how Python carries undecodable bytes of file names (surrogateescape).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_UNSAFE_KEEP_LINES = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte carried by surrogateescape: show the byte
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"<U+{code:04X}>"


def visible(text: str, *, lines: bool = False) -> str:
    """`text` with everything a terminal would act on made visible and inert.

    lines: keep line feeds (a multi-line message shown as such); carriage returns are escaped all the same,
    since one can overwrite a line already shown. Without it the result is always a single line."""
    pattern = _UNSAFE_KEEP_LINES if lines else _UNSAFE
    if pattern.search(text) is None:  # the common case: nothing to do, no copy
        return text
    return pattern.sub(_escape, text)


def is_clean(text: str, *, lines: bool = False) -> bool:
    """Whether `text` would pass through `visible` unchanged."""
    return (_UNSAFE_KEEP_LINES if lines else _UNSAFE).search(text) is None


def visible_fields(value: T) -> T:
    """A copy of a record from outside (a dataclass; tuples, lists and dicts of them; a string) with every string
    made visible: what a screen is given, so that no field of it can be shown raw by a widget that forgot. A
    record with nothing to change is returned as it is (no copy)."""
    return _visible_fields(value)  # type: ignore[no-any-return]


_SCALARS = (int, float, bool, type(None))


_FIELDS: dict[type, tuple[str, ...]] = {}


def _init_fields(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls) if f.init)
    return names


def _visible_fields(value: Any) -> Any:
    kind = type(value)
    if kind is str:
        return visible(value)
    if kind in _SCALARS or isinstance(value, enum.Enum):
        return value
    if kind is tuple or kind is list:
        items = [_visible_fields(v) for v in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return tuple(items) if kind is tuple else items
    if kind is dict:
        pairs = [(_visible_fields(k), _visible_fields(v)) for k, v in value.items()]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(pairs, value.items(), strict=True)):
            return value
        return dict(pairs)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {}
        for name in _init_fields(kind):
            old = getattr(value, name)
            new = _visible_fields(old)
            if new is not old:
                changes[name] = new
        return dataclasses.replace(value, **changes) if changes else value
    return value
