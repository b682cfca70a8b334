"""rsync's own output as podtui reads it (docs/sync.md#routes): `--info=progress2` lines in the C locale and in one
whose decimal mark is a comma (rsync then groups digits with `.`), and `%n` names with rsync's `\\#ooo` escapes.
The lines are as rsync 3.2 printed them here (`LC_ALL=de_DE.UTF-8` from a locale made with localedef)."""

from __future__ import annotations

import shutil
import subprocess

from podtui.transfer.sync.rsync_route import MIN_VERSION, _unescape, local_rsync, progress_bytes, rsync_version


def test_progress_in_any_locale() -> None:
    assert progress_bytes(b"     30,000,000 100%  408.27MB/s    0:00:00 (xfr#1, to-chk=0/1)") == 30_000_000
    assert progress_bytes(b"     30.000.000 100%  408,27MB/s    0:00:00 (xfr#1, to-chk=0/1)") == 30_000_000
    assert progress_bytes(b"         32.768   0%    0,00kB/s    0:00:00  ") == 32_768
    assert progress_bytes(b"              1   0%    0.00kB/s    0:00:00  ") == 1
    assert progress_bytes(b"podtui-file big.bin") is None
    assert progress_bytes(b"") is None


def test_names_with_rsyncs_escapes() -> None:
    assert _unescape(b"sub/new\\#012line \xc3\xa9.txt") == "sub/new\nline é.txt"
    assert _unescape(b"back\\#134#012slash") == "back\\#012slash"  # a real backslash before `#ooo` is escaped too
    assert _unescape(b"bad\\#377byte") == "bad\udcffbyte"


def test_which_rsync_podtui_drives() -> None:
    """3.1 or later here (--info=progress2); macOS's own rsync 2.6.9 and its openrsync are left for SFTP."""
    for said, version in (
        ("rsync  version 3.2.7  protocol version 31\nCopyright (C) 1996-2022 by Andrew Tridgell", (3, 2, 7)),
        ("rsync  version 2.6.9  protocol version 29\nCopyright (C) 1996-2006 by Andrew Tridgell", (2, 6, 9)),
        ("openrsync: protocol version 29\nrsync version 2.6.9 compatible", (2, 6, 9)),
        ("rsync  version v3.4.1  protocol version 32", (3, 4, 1)),
        ("", None),
    ):
        assert rsync_version(said) == version, said
    assert (3, 0, 9) < MIN_VERSION <= (3, 1, 0)
    installed = shutil.which("rsync")
    if installed is not None:  # the rsync of this machine, as local_rsync reads it
        said = subprocess.run([installed, "--version"], capture_output=True, text=True).stdout
        assert (local_rsync() is not None) == ((rsync_version(said) or (0, 0, 0)) >= MIN_VERSION)
