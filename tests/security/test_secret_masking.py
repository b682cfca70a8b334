"""Secrets are masked everywhere they could surface: logs (including tracebacks), messages, files."""

from __future__ import annotations

import logging
import stat
from pathlib import Path

from podtui.core import secret
from podtui.core.log_file import SafeLogFilter

KEY = "rpa_SECRETSECRETSECRETSECRET9999"


def test_mask() -> None:
    assert secret.mask(KEY) == "rpa_…9999"
    assert secret.mask("short") == "********"
    assert secret.mask(None) == "(none)"


def test_log_filter_scrubs_messages_args_and_tracebacks(tmp_path: Path) -> None:
    secret.register(KEY)
    log_file = tmp_path / "x.log"
    handler = logging.FileHandler(log_file)
    handler.addFilter(SafeLogFilter())
    logger = logging.getLogger("test-secret")
    logger.addHandler(handler)
    try:
        logger.warning("key is %s", KEY)
        logger.warning(f"inline {KEY}")
        try:
            raise RuntimeError(f"boom {KEY}")
        except RuntimeError:
            logger.exception("failed")
    finally:
        logger.removeHandler(handler)
        handler.close()
    text = log_file.read_text()
    assert KEY not in text
    assert text.count("rpa_…9999") == 3 and "RuntimeError" in text


def test_write_private(tmp_path: Path) -> None:
    p = tmp_path / "sub" / "f.toml"
    secret.write_private(p, "x = 1\n")
    assert stat.S_IMODE(p.stat().st_mode) == 0o600
    assert p.read_text() == "x = 1\n"
    assert [x.name for x in p.parent.iterdir()] == ["f.toml"]  # no temp file left behind
