"""Finding the user's Hugging Face token where huggingface_hub looks (`get_token()`), and saying which source
it came from without ever showing it.

The order is the library's: HF_TOKEN, then the older HUGGING_FACE_HUB_TOKEN, then the token file at
HF_TOKEN_PATH, else $HF_HOME/token, else $XDG_CACHE_HOME/huggingface/token, else ~/.cache/huggingface/token.
(The library also knows OIDC exchange in CI and Colab's secret vault; neither applies on a laptop.) The
environment is read when asked, not at import, so a token set after start-up is found.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from podtui.core import secret
from podtui.core.config import ConfigError
from podtui.core.user_files import NotAFile, read_user_file


@dataclass(frozen=True)
class FoundToken:
    value: str
    source: str  # "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", a file path, or "--token-file PATH" / "demo"

    @property
    def masked(self) -> str:
        return mask(self.value)

    def __repr__(self) -> str:  # a token in a traceback or a debug print shows masked
        return f"FoundToken({self.masked}, source={self.source!r})"


def mask(token: str | None) -> str:
    """At most the `hf_` prefix and the last four characters, e.g. hf_…a1b2."""
    if not token:
        return "(none)"
    if len(token) < 12:
        return "********"
    return f"{'hf_' if token.startswith('hf_') else ''}…{token[-4:]}"


def clean(raw: str | None) -> str | None:
    """As huggingface_hub's _clean_token: surrounding whitespace and line breaks dropped; empty is none."""
    if raw is None:
        return None
    value = raw.replace("\r", "").replace("\n", "").strip()
    return value or None


def token_file() -> Path:
    """Where huggingface_hub reads (and `hf auth login` writes) the token."""
    explicit = os.environ.get("HF_TOKEN_PATH")
    if explicit:
        return Path(os.path.expandvars(os.path.expanduser(explicit)))
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "huggingface"
    )
    return Path(os.path.expandvars(os.path.expanduser(home))) / "token"


def discover() -> FoundToken | None:
    """The token, or None. Raises ConfigError when the token file is there but not a regular file."""
    for var in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"):
        value = clean(os.environ.get(var))
        if value:
            return found(value, var)
    path = token_file()
    try:
        value = clean(read_user_file(path).decode("utf-8"))
    except NotAFile as e:  # a FIFO, a directory or a device where the token belongs: refused, and said
        raise ConfigError(str(e)) from None
    except (OSError, UnicodeDecodeError):
        return None
    return found(value, str(path)) if value else None


def found(value: str, source: str) -> FoundToken:
    """A token from anywhere: registered first, so every log line and error message scrubs it."""
    secret.register(value)
    return FoundToken(value, source)


def looks_sendable(value: str) -> bool:
    """Printable ASCII without spaces: what the Hub issues, and what is safe to feed through a terminal."""
    return bool(value) and all(33 <= ord(c) < 127 for c in value) and len(value) < 4096
