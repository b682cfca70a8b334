"""A folder's manifest: which symlinks stay inside it (resolved as the kernel would, through the folder's own
links), what is refused, and how two manifests compare. Checked against the real kernel on real folders."""

from __future__ import annotations

import errno
import os
import random
from pathlib import Path

import pytest

from podtui.transfer import manifest
from podtui.transfer.manifest import Entry, FolderRefused
from tests.helpers.repo import REPO


def inside_by_kernel(top: Path, link: Path) -> bool:
    """What the kernel says: where the link really leads (missing parts resolved lexically, as realpath does)."""
    real_top = os.path.realpath(top)
    target = os.path.realpath(link)
    return target == real_top or target.startswith(real_top + os.sep)


NAMES = ["a", "b", "c", "sub/x", "sub/y", "sub/deep/z"]
TARGETS = [
    ".",
    "..",
    "a",
    "../a",
    "sub",
    "sub/..",
    "sub/../..",
    "../../..",
    "x",
    "../x",
    "deep/..",
    "deep/../..",
    "b/../a",
    "c/..",
    "c/../..",
    "nothing",
    "sub/deep",
    "../sub/deep/../..",
]


@pytest.mark.parametrize("seed", range(60))
def test_stays_inside_agrees_with_the_kernel(seed: int, tmp_path: Path) -> None:
    """Random folders of relative links, through each other (`self -> .` then `x -> self/../y` and the like)."""
    rng = random.Random(seed)
    top = tmp_path / "top"
    (top / "sub" / "deep").mkdir(parents=True)
    (top / "file.bin").write_bytes(b"x")
    for name in rng.sample(NAMES, rng.randint(2, len(NAMES))):
        path = top / name
        if not os.path.lexists(path.parent) or path.parent.is_symlink():
            continue
        path.symlink_to(rng.choice(TARGETS))
    entries = manifest.scan_local(top)
    links = [p for p, e in entries.items() if e.kind == "l"]
    assert links
    for rel in links:
        try:
            os.stat(top / rel)
        except OSError as e:
            if e.errno == errno.ELOOP:  # a loop: kept as links, nothing outside is ever reached through it
                assert manifest.stays_inside(entries, rel)
                continue
        assert manifest.stays_inside(entries, rel) == inside_by_kernel(top, top / rel), (rel, entries)


def test_what_is_refused_and_what_is_kept(tmp_path: Path) -> None:
    top = tmp_path / "run"
    (top / "sub").mkdir(parents=True)
    (top / "w.bin").write_bytes(b"w")
    (top / "same.bin").symlink_to("w.bin")
    (top / "sub" / "up.bin").symlink_to("../w.bin")
    (top / "later").symlink_to("not-yet")
    (top / "abs").symlink_to("/etc/hosts")
    (top / "out").symlink_to("../elsewhere")
    os.mkfifo(top / "pipe")
    found = manifest.problems(manifest.scan_local(top))
    assert found == [
        "abs is a symlink to an absolute path (/etc/hosts)",
        "out is a symlink out of the folder (../elsewhere)",
        "pipe is a FIFO (named pipe)",
    ]
    with pytest.raises(FolderRefused, match=r"^run holds what podtui does not copy: abs is a symlink"):
        manifest.refuse(manifest.scan_local(top), "run")


def test_differences_name_what_differs() -> None:
    source = {"a": Entry("f", 3, "aa"), "b": Entry("f", 3, "bb"), "d": Entry("d"), "l": Entry("l", 0, "a")}
    assert manifest.summary(source, dict(source)) is None
    arrived = {"a": Entry("f", 3, "ax"), "d": Entry("l", 0, "x"), "l": Entry("l", 0, "b"), "z": Entry("f", 1, "z")}
    said = manifest.summary(source, arrived)
    assert said == (
        "5 differences: a differs; b missing; d is a symlink, not a folder; l points to b, not a; z not in the source"
    )
    assert manifest.summary(source, {}) is not None  # nothing arrived is never a match
    assert manifest.digest(source) == manifest.digest(dict(reversed(list(source.items()))))
    assert manifest.digest(source) != manifest.digest(arrived)


AS_NOBODY = """
import json, os, sys
from pathlib import Path
from podtui.transfer import manifest, source  # loaded as root: the interpreter's folders may be closed to nobody
os.setgroups([]); os.setgid(65534); os.setuid(65534)
said = []
for path in sys.argv[1:]:
    try:
        if Path(path).is_dir():
            manifest.scan_local(Path(path))
        else:
            source.local(Path(path))
        said.append("ok")
    except (manifest.ManifestError, source.SourceRefused) as e:
        said.append(str(e))
print(json.dumps(said))
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="becomes another user, for whom a file can be unreadable")
def test_a_file_that_cannot_be_read_is_found_while_the_source_is_looked_at() -> None:
    """Before anything is packed or sent, whichever file it is: deep in a folder, or the source itself."""
    import json
    import shutil
    import subprocess
    import sys
    import tempfile

    top = Path(tempfile.mkdtemp(prefix="podtui-unreadable-"))  # under /tmp itself: nobody can reach it
    try:
        top.chmod(0o755)
        (top / "ok" / "sub").mkdir(parents=True)
        (top / "ok" / "sub" / "a.bin").write_bytes(b"a")
        (top / "deep" / "sub").mkdir(parents=True)
        (top / "deep" / "sub" / "secret.bin").write_bytes(b"s")
        (top / "deep" / "sub" / "secret.bin").chmod(0o000)
        (top / "closed").mkdir()
        (top / "closed" / "x.bin").write_bytes(b"x")
        (top / "closed").chmod(0o000)
        (top / "model.bin").write_bytes(b"m")
        (top / "model.bin").chmod(0o200)
        for p in [top / "ok", top / "ok" / "sub", top / "deep", top / "deep" / "sub"]:
            p.chmod(0o755)
        (top / "ok" / "sub" / "a.bin").chmod(0o644)
        paths = [top / "ok", top / "deep", top / "closed", top / "model.bin"]
        out = subprocess.run(
            [sys.executable, "-c", AS_NOBODY, *map(str, paths)], capture_output=True, text=True, timeout=60, cwd=REPO
        )
        assert out.returncode == 0, out.stderr
        ok, deep, closed, model = json.loads(out.stdout)
        assert ok == "ok"
        assert deep == f"cannot read {top}/deep/sub/secret.bin: Permission denied"
        assert closed == f"cannot list {top}/closed: Permission denied"
        assert model == f"cannot read {top}/model.bin: Permission denied"
    finally:
        for p in top.rglob("*"):
            p.chmod(0o700) if p.is_dir() else None
        shutil.rmtree(top)
