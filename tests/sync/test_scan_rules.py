"""What a sync leaves out and what it sees: .gitignore files as git reads them (negation, anchoring, folder-only
patterns, nested files, `**`), --exclude winning over them, `.git`, symlinks and special files (docs/sync.md)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from podtui.transfer.sync.ignore import BadPattern, IgnoreRules, check_excludes
from podtui.transfer.sync.scan import scan_local
from podtui.transfer.sync.tree import Scan, parse_time, plain, stays_inside, time_arg


def make(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def scan(root: Path, excludes: tuple[str, ...] = (), gitignore: bool = True) -> Scan:
    return scan_local(root, IgnoreRules(excludes, gitignore))


def files(s: Scan) -> set[str]:
    return {p for p, n in s.tree.items() if n.kind == "file"}


def test_gitignore_as_git_reads_it(tmp_path: Path) -> None:
    root = make(
        tmp_path / "repo",
        {
            ".gitignore": "*.log\n!keep.log\n/top.txt\nbuild/\ndocs/**/draft.md\n# a comment\n\\#hash\n",
            "a.log": "",
            "keep.log": "",
            "sub/b.log": "",
            "sub/keep.log": "",
            "top.txt": "",
            "sub/top.txt": "",  # anchored: only the top one
            "build/out.o": "",
            "sub/build/out.o": "",  # folder-only, at any depth
            "notbuild/build": "",  # a file named build is not the folder `build/`
            "docs/draft.md": "",  # `**` is zero or more folders
            "docs/a/b/draft.md": "",
            "docs/a/final.md": "",
            "#hash": "",
            "src/main.py": "",
        },
    )
    got = files(scan(root))
    assert got == {
        ".gitignore",
        "keep.log",
        "sub/keep.log",
        "sub/top.txt",
        "notbuild/build",
        "docs/a/final.md",
        "src/main.py",
    }


def test_nested_gitignore_overrides_its_parents_and_applies_below_it_only(tmp_path: Path) -> None:
    root = make(
        tmp_path / "repo",
        {
            ".gitignore": "*.bin\n",
            "data/.gitignore": "!*.bin\n/local.txt\n",  # a deeper file wins; anchored to its own folder
            "model.bin": "",
            "data/weights.bin": "",
            "data/local.txt": "",
            "data/sub/local.txt": "",
            "other/x.bin": "",
        },
    )
    assert files(scan(root)) == {".gitignore", "data/.gitignore", "data/weights.bin", "data/sub/local.txt"}


def test_an_ignored_folder_is_not_entered_and_a_negation_cannot_bring_back_what_is_in_it(tmp_path: Path) -> None:
    root = make(tmp_path / "repo", {".gitignore": "logs/\n!logs/important.txt\n", "logs/important.txt": ""})
    s = scan(root)
    assert files(s) == {".gitignore"} and s.ignored == 1  # the folder, counted once


def test_exclude_wins_over_gitignore_and_dot_git_is_always_left_out(tmp_path: Path) -> None:
    root = make(
        tmp_path / "repo",
        {
            ".gitignore": "!data.csv\n",
            "data.csv": "",
            "secrets/key": "",
            "notes.md": "",
            ".git/HEAD": "",
            "sub/.git": "gitdir: ../.git/worktrees/sub",  # a worktree's .git file
            "sub/code.py": "",
        },
    )
    assert files(scan(root, excludes=("*.csv", "secrets/"))) == {".gitignore", "notes.md", "sub/code.py"}
    assert files(scan(root, excludes=("*.md", "!notes.md"))) >= {"notes.md"}


def test_no_gitignore_reads_none_and_copies_git_too(tmp_path: Path) -> None:
    root = make(tmp_path / "repo", {".gitignore": "*.log\n", "a.log": "", ".git/HEAD": "", "x.tmp": ""})
    assert files(scan(root, excludes=("*.tmp",), gitignore=False)) == {".gitignore", "a.log", ".git/HEAD"}


def test_podtuis_working_folders_are_never_listed(tmp_path: Path) -> None:
    root = make(tmp_path / "repo", {".podtui-sync-abc123/3": "", "sub/.podtui-sync-x/y": "", "a": ""})
    assert files(scan(root, gitignore=False)) == {"a", "sub/.podtui-sync-x/y"}  # only at the top is it podtui's


def test_bad_patterns(tmp_path: Path) -> None:
    with pytest.raises(BadPattern, match=r"\[z-a\]"):
        check_excludes(["*.log", "[z-a]"])
    root = make(tmp_path / "repo", {".gitignore": "[z-a]\n*.log\n", "a.log": "", "b.txt": ""})
    rules = IgnoreRules()
    s = scan_local(root, rules)
    assert files(s) == {".gitignore", "b.txt"}  # git skips a bad line; the rest still counts
    assert rules.bad == [("", "[z-a]")]


def test_symlinks_inside_are_kept_as_links_and_those_leading_out_are_skipped(tmp_path: Path) -> None:
    root = make(tmp_path / "repo", {"run3/model.bin": "m", "sub/x": ""})
    (root / "latest").symlink_to("run3")
    (root / "sub" / "up").symlink_to("../run3/model.bin")
    (root / "self").symlink_to(".")
    (root / "sneaky").symlink_to("self/../..")  # through another link, out of the folder
    (root / "abs").symlink_to("/etc/passwd")
    (root / "out").symlink_to("../elsewhere")
    os.mkfifo(root / "pipe")
    s = scan(root)
    links = {p: n.target for p, n in s.tree.items() if n.kind == "link"}
    assert links == {"latest": "run3", "sub/up": "../run3/model.bin", "self": "."}
    assert dict(s.skipped) == {
        "sneaky": "a symlink out of the folder (self/../..): not followed",
        "abs": "a symlink out of the folder (/etc/passwd): not followed",
        "out": "a symlink out of the folder (../elsewhere): not followed",
        "pipe": "a FIFO (named pipe): not copied",
    }
    assert "run3/model.bin" in s.tree and "latest/model.bin" not in s.tree  # never followed


def test_covers_sees_ignored_folders_above_a_path() -> None:
    rules = IgnoreRules(("*.tmp",))
    rules.add_gitignore("", "build/\n")
    rules.add_gitignore("src", "gen/\n")
    assert rules.covers("build/deep/x.o", False)
    assert rules.covers("src/gen/a.py", False)
    assert rules.covers("a/b.tmp", False)
    assert not rules.covers("src/main.py", False)
    assert not rules.covers("gen/a.py", False)  # src's rule applies under src only


def test_tree_helpers() -> None:
    assert [plain(p) for p in ("a", "a/b", "", "/a", "a/../b", "./a", "a//b", "a/", "a\0b")] == [
        True,
        True,
        False,
        False,
        False,
        False,
        False,
        False,
        False,
    ]
    assert parse_time("1712345678.1234567890") == 1712345678123456789
    assert parse_time("5") == 5_000_000_000
    assert time_arg(1712345678000000007) == "1712345678.000000007"
    links = {"a": "b", "b": "a", "c": "d/../../x"}  # a loop stays inside (the kernel never gets out of it)
    assert stays_inside(links, "a") and not stays_inside(links, "c")


TRICKY = {
    # ignore everything, then bring back every folder and the .py files: the common "whitelist" form
    "whitelist": {
        ".gitignore": "*\n!*/\n!*.py\n",
        "a.py": "",
        "b.txt": "",
        "d/c.py": "",
        "d/e/f.py": "",
        "d/e/g.md": "",
    },
    "whitelist_below": {
        "sub/.gitignore": "*\n!*/\n!.gitignore\n!*.md\n",
        "sub/a.md": "",
        "sub/b/c.md": "",
        "sub/b/d.txt": "",
        "top.txt": "",
    },
    "negated_folder_keeps_its_files_rules": {".gitignore": "*.log\n!keep/\n", "keep/x.log": "", "keep/y": ""},
    "folder_pattern_then_negated_name": {".gitignore": "foo/\n!foo\n", "foo/x": "", "bar/foo": ""},
    "name_then_negated_folder": {".gitignore": "logs\n!logs/\n", "logs/a": "", "x/logs": ""},
    "one_level_down": {".gitignore": "a/*/\n!a/keep/\n", "a/keep/x": "", "a/drop/y": "", "a/file": ""},
    "anchored_whitelist": {".gitignore": "/*\n!/src/\n/src/*\n!/src/keep/\n", "src/keep/a": "", "src/b": "", "c": ""},
    "star_slash_star": {".gitignore": "*/*\n", "a/b": "", "c": "", "a/d/e": ""},
    "double_star": {
        ".gitignore": "**/logs\na/**/b\nabc/**\n",
        "logs/x": "",
        "q/logs/y": "",
        "a/x/y/b": "",
        "abc/d/y": "",
    },
    "deeper_wins": {".gitignore": "*.bin\n", "d/.gitignore": "!x.bin\n", "d/x.bin": "", "d/y.bin": "", "x.bin": ""},
}


@pytest.mark.skipif(shutil.which("git") is None, reason="compares with git itself")
@pytest.mark.parametrize("case", sorted(TRICKY))
def test_the_files_kept_are_those_git_keeps(tmp_path: Path, case: str) -> None:
    """The same tree through git (`ls-files --others --exclude-standard`: what it does not ignore) and the scan."""
    root = make(tmp_path / case, TRICKY[case])
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    listed = subprocess.run(
        ["git", "-C", str(root), "ls-files", "-z", "--others", "--exclude-standard"], capture_output=True, check=True
    ).stdout
    assert files(scan(root)) == {p for p in os.fsdecode(listed).split("\0") if p}
