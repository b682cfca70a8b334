"""10,000 small files through the gateway's console (docs/sync.md#routes): one listing, batches, a few dozen
commands in all rather than thousands, and a second sync that costs a handful."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from podtui.core.ssh.remote import CommandResult, RemoteShell
from tests.helpers.sync import CONSOLE, Syncer, no_leftovers

FOLDERS, PER_FOLDER = 100, 100


@pytest.mark.parametrize("route", [CONSOLE])
def test_ten_thousand_files_cost_a_few_commands(
    syncer: Syncer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "src"
    for i in range(FOLDERS):
        folder = src / f"dir{i:03d}"
        folder.mkdir(parents=True)
        for j in range(PER_FOLDER):
            (folder / f"file {j}.txt").write_text(f"{i}/{j}\n")
    commands: list[str] = []
    real_run = RemoteShell.run

    def counted(self: RemoteShell, command: str, *args: Any, **kw: Any) -> CommandResult:
        commands.append(command)
        return real_run(self, command, *args, **kw)

    monkeypatch.setattr(RemoteShell, "run", counted)
    r = syncer.sync(src)
    assert r.ok, (r.error, r.failed[:3])
    assert len(r.verified) == FOLDERS * PER_FOLDER
    remote = syncer.workspace / "proj"
    assert sum(1 for p in remote.rglob("*") if p.is_file()) == FOLDERS * PER_FOLDER
    assert (remote / "dir042" / "file 7.txt").read_text() == "42/7\n"
    assert no_leftovers(remote)
    assert len(commands) < 60, len(commands)

    commands.clear()
    r = syncer.sync(src)
    assert r.ok and r.plan is not None and r.plan.copies == [] and r.plan.unchanged == FOLDERS * PER_FOLDER
    assert len(commands) < 15, commands
