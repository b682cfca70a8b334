"""The plan from two listings: every case of docs/sync.md#what-counts-as-changed and docs/sync.md#deleting, and that
nothing outside the destination folder, ignored, or kept by the source is ever deleted."""

from __future__ import annotations

from podtui.transfer.sync.ignore import IgnoreRules
from podtui.transfer.sync.plan import Plan, make_plan, settle
from podtui.transfer.sync.tree import Node, Scan, Tree

T0 = 1_700_000_000_000_000_000


def f(size: int, mtime: int = T0, mode: int = 0o644, readable: bool = True) -> Node:
    return Node("file", size, mtime, mode, readable=readable)


D = Node("dir", mode=0o755)


def link(target: str) -> Node:
    return Node("link", target=target)


def plan(source: Tree, dest: Tree, delete: bool = False, rules: IgnoreRules | None = None, **scan: object) -> Plan:
    return make_plan(Scan(tree=source, **scan), Scan(tree=dest), rules or IgnoreRules(), pull=False, delete=delete)  # type: ignore[arg-type]


def test_new_changed_and_unchanged() -> None:
    p = plan(
        {"a": f(1), "b": f(2), "c": f(3), "sub": D, "sub/d": f(4), "empty": D},
        {"b": f(5), "c": f(3)},
    )
    assert [(c.path, c.why) for c in p.copies] == [("a", "new"), ("b", "changed"), ("sub/d", "new")]
    assert p.mkdirs == ["empty", "sub"] and p.unchanged == 1 and p.check == [] and p.bytes_to_copy == 7
    assert not p.deletes and not p.rmdirs and p.extra == 0


def test_same_size_other_time_is_hashed_then_copied_or_only_touched() -> None:
    p = plan(
        {"same": f(10, T0 + 5), "other": f(10, T0 + 5), "lost": f(10, T0 + 5)},
        {p: f(10) for p in ("same", "other", "lost")},
    )
    assert [c.path for c in p.check] == ["lost", "other", "same"] and not p.copies
    settle(p, {"same": "h1", "other": "h2"}, {"same": "h1", "other": "h3", "lost": "h4"})
    assert [c.path for c in p.copies] == ["other"]
    assert p.touch == [("same", T0 + 5)] and p.settled == 1 and p.unchanged == 1
    assert p.failed == [("lost", "could not be hashed to compare it")]  # the source could not be hashed


def test_a_destination_that_cannot_be_hashed_is_copied_over() -> None:
    p = plan({"a": f(4, T0 + 1)}, {"a": f(4)})
    settle(p, {"a": "h"}, {})
    assert [c.path for c in p.copies] == ["a"]


def test_the_executable_bit_alone_is_set_without_copying() -> None:
    p = plan(
        {"run.sh": f(3, mode=0o755), "lib.py": f(3, T0 + 1, mode=0o644)},
        {"run.sh": f(3, mode=0o644), "lib.py": f(3, mode=0o755)},
    )
    assert p.chmod == [("run.sh", 0o755)] and not p.copies
    settle(p, {"lib.py": "x"}, {"lib.py": "x"})
    assert p.chmod == [("run.sh", 0o755), ("lib.py", 0o644)] and p.touch == [("lib.py", T0 + 1)]


def test_unreadable_source_files_fail_alone() -> None:
    p = plan({"secret": f(1, readable=False), "ok": f(1), "same": f(1, readable=False)}, {"same": f(1)})
    assert p.failed == [("secret", "cannot read it: Permission denied")]
    assert [c.path for c in p.copies] == ["ok"] and p.unchanged == 1  # unchanged: never read


def test_delete_removes_what_the_source_lacks_deepest_first() -> None:
    p = plan(
        {"keep": f(1)},
        {"keep": f(1), "old": f(1), "gone": D, "gone/a": f(1), "gone/sub": D, "gone/sub/b": f(1), "dead": link("x")},
        delete=True,
    )
    assert p.deletes == ["gone/sub/b", "gone/a", "dead", "old"]
    assert p.rmdirs == ["gone/sub", "gone"]
    without = plan({"keep": f(1)}, {"keep": f(1), "old": f(1), "gone": D, "gone/a": f(1)})
    assert not without.deletes and not without.rmdirs and without.extra == 2


def test_delete_never_touches_what_is_ignored_kept_by_the_source_or_not_a_plain_path() -> None:
    theirs = IgnoreRules()
    theirs.add_gitignore("", "cache/\n*.ckpt\n")
    p = plan(
        {"src": D},
        {
            "src": D,
            "run.ckpt": f(1),  # the destination's own .gitignore keeps it
            "cache": D,
            "cache/x": f(1),
            "fifo-here": f(1),  # the source has a special file there: not synced, and its counterpart kept
            "unlisted": D,
            "unlisted/y": f(1),  # the source could not list that folder
            "../etc/passwd": f(1),  # never a path a listing gives; never deleted if one did
            "/abs": f(1),
            "a/../b": f(1),
        },
        delete=True,
        rules=theirs,
        skipped=[("fifo-here", "a FIFO (named pipe): not copied")],
        unlisted={"unlisted"},
    )
    assert p.deletes == [] and p.rmdirs == []
    assert p.protected == 3  # run.ckpt, cache, cache/x


def test_an_incomplete_destination_listing_deletes_nothing() -> None:
    p = make_plan(
        Scan(tree={}),
        Scan(tree={"a": f(1)}, incomplete="find: permission denied"),
        IgnoreRules(),
        pull=True,
        delete=True,
    )
    assert p.deletes == [] and p.notes == [
        "nothing deleted: the destination's listing may be incomplete (find: permission denied)"
    ]
    # the pod's folder as the source of a pull: what find could not read is not missing from the pod
    p = make_plan(
        Scan(tree={"a": f(1)}, incomplete="find: './logs': Permission denied"),
        Scan(tree={"a": f(1), "logs": D, "logs/x": f(1)}),
        IgnoreRules(),
        pull=True,
        delete=True,
    )
    assert (
        p.deletes == []
        and p.rmdirs == []
        and p.notes == ["nothing deleted: the source's listing may be incomplete (find: './logs': Permission denied)"]
    )


def test_a_file_where_a_folder_is_and_the_other_way_round() -> None:
    source = {"x": f(1), "y": D, "y/z": f(1), "w": D, "w/v": f(1)}
    dest = {"x": D, "x/old": f(1), "y": f(9), "w": link("/etc")}  # a symlink is never written through
    p = plan(source, dest)
    assert [path for path, _ in p.failed] == ["w", "x", "y"]
    assert "a symlink there, not a folder" in dict(p.failed)["w"]
    assert not p.copies and not p.mkdirs  # nothing under a path that failed
    p = plan(source, dest, delete=True)
    assert p.deletes == ["x/old", "w", "y"] and p.rmdirs == ["x"]
    assert p.mkdirs == ["w", "y"] and [c.path for c in p.copies] == ["w/v", "x", "y/z"]
    assert not p.failed


def test_symlinks_are_made_again_when_their_target_differs() -> None:
    p = plan({"a": link("b"), "c": link("d"), "e": link("f")}, {"a": link("b"), "c": link("other"), "e": f(3)})
    assert p.links == [("c", "d"), ("e", "f")] and p.unchanged == 1


def test_an_empty_plan() -> None:
    p = plan({"a": f(1), "d": D}, {"a": f(1), "d": D})
    assert p.empty and p.unchanged == 1


def test_delete_keeps_the_destinations_gitignore_that_keeps_something() -> None:
    """The source has no `old/`: the destination's old/.gitignore keeps old/run.ckpt from --delete, so it stays too;
    deleted, the next sync would find nothing keeping run.ckpt and delete it."""
    theirs = IgnoreRules()
    theirs.add_gitignore("old", "*.ckpt\n")
    theirs.add_gitignore("spent", "*.tmp\n")
    dest = {
        "old": D,
        "old/.gitignore": f(7),
        "old/run.ckpt": f(1),
        "old/notes.txt": f(1),
        "spent": D,
        "spent/.gitignore": f(6),  # keeps nothing: deleted with its folder
        "spent/a": f(1),
    }
    p = plan({}, dest, delete=True, rules=theirs)
    assert p.deletes == ["old/notes.txt", "spent/.gitignore", "spent/a"]
    assert p.rmdirs == ["old", "spent"] and p.protected == 2  # old/run.ckpt and its old/.gitignore


def test_delete_never_removes_a_repository_the_source_does_not_have() -> None:
    """With --no-gitignore `.git` is synced like the rest; still, a `.git` only the destination has (a pull into a
    clone, from a pod's folder that is none) is never deleted, nor anything in it."""
    rules = IgnoreRules(gitignore=False)
    dest = {".git": D, ".git/HEAD": f(1), "sub": D, "sub/.git": f(2), "old.txt": f(1)}
    p = plan({"sub": D}, dest, delete=True, rules=rules)
    assert p.deletes == ["old.txt"] and p.rmdirs == [] and p.protected == 3
    p = plan({".git": D, ".git/HEAD": f(1), "sub": D}, {**dest, ".git/stale": f(1)}, delete=True, rules=rules)
    assert p.deletes == [".git/stale", "old.txt"]  # the source's own .git is mirrored; sub/.git is still kept
