"""The names Textual gives the keys a terminal sends: whether a key written in config.toml's [keys] is one of them,
and the form Textual matches bindings against.

A binding whose key Textual never sends can never fire, so a name that is not one of these ("esc", "enterr",
"ctrl+X") is refused rather than taking the binding's key away.
"""

from __future__ import annotations

import difflib
from functools import cache

from textual._keyboard_protocol import FUNCTIONAL_KEYS  # the kitty protocol's own keys: f25, media_play...
from textual.keys import KEY_NAME_REPLACEMENTS, REPLACED_KEYS, Keys, _character_to_key, key_to_character

MODIFIERS = frozenset({"alt", "ctrl", "hyper", "meta", "shift", "super"})


@cache
def _names() -> frozenset[str]:
    """Every base name Textual sends that is more than one character: its Keys ("escape", "pageup", "f5") and the
    names of the printable characters that are not letters or digits ("slash", "question_mark", "full_stop")."""
    names = {key.value.split("+")[-1] for key in Keys if not key.value.startswith("<")}
    names.update(FUNCTIONAL_KEYS.values())
    names.update(_character_to_key(chr(c)) for c in range(33, 127))
    return frozenset(name for name in names if len(name) > 1)


def character(name: str) -> str | None:
    """The printable character a key name stands for ("full_stop" is ".", "section_sign" is "§"), or None."""
    char = key_to_character(REPLACED_KEYS.get(name, name))
    if char is None or len(char) != 1 or not char.isprintable() or char.isspace():
        return None
    return char if _character_to_key(char) == name else None


def _is_sent(modifiers: list[str], base: str) -> bool:
    if len(base) == 1:
        # a capital comes as itself ("X"), and with another modifier as shift and the small letter
        # ("ctrl+shift+x"): never "ctrl+X", nor "shift+x"
        return (
            base.isprintable()
            and not base.isspace()
            and modifiers != ["shift"]
            and not (modifiers and base != base.lower())
        )
    return base in _names() or character(base) is not None


def unknown(key: str) -> str | None:
    """None when Textual can send this key; else what to say about it: 'no key named "esc" (escape?)'."""
    *modifiers, base = normal(key).split("+")
    if not base or not set(modifiers) <= MODIFIERS:
        return f'no key named "{key}" (modifiers: {", ".join(sorted(MODIFIERS))})'
    if _is_sent(modifiers, base):
        return None
    likely: str | None = None
    if len(base) == 1 and base.isalpha():
        others = set(modifiers) - {"shift"}
        likely = "+".join([*sorted({*others, "shift"}), base.lower()]) if others else base.upper()
    elif len(base) > 1:
        close = (
            [KEY_NAME_REPLACEMENTS[base]]
            if base in KEY_NAME_REPLACEMENTS
            else difflib.get_close_matches(base, sorted(_names()), n=1)
        )
        likely = "+".join([*modifiers, close[0]]) if close else None
    return f'no key named "{key}"' + (f" ({likely}?)" if likely else "")


def normal(key: str) -> str:
    """The key as Textual matches it: a character that is not a letter or digit by its name ("?" is
    "question_mark", "ctrl+/" is "ctrl+slash"), as Textual does itself only for a key that is that character
    alone; modifiers in lower case ("Ctrl+x" is "ctrl+x")."""
    *modifiers, base = key.split("+")
    modifiers = [m.lower() for m in modifiers]
    if len(base) == 1:
        base = _character_to_key(base)
    return "+".join([*modifiers, base])
