"""The quick parse of the app's own options (docs/architecture.md#start-up) settles exactly what the whole parser
settles, and leaves everything else, mistakes included, to it: the same arguments, the same errors, the same help."""

from __future__ import annotations

import contextlib
import io

import pytest

from podtui.cli import main

ARGVS = [
    [],
    ["--demo"],
    ["--read-only"],
    ["--demo", "--read-only", "--size", "80x24"],
    ["--size=200x50", "--demo"],
    ["--demo", "--exit-when", "first-frame"],
    ["--screenshot", "/tmp/x.svg", "--size", "100x30"],
    ["--screenshot=/tmp/x.svg"],
    ["--si", "80x24"],  # an abbreviation: argparse takes it
    # mistakes: each must read as the whole parser says it
    ["--size", "bad"],
    ["--size", "1x1"],
    ["--size"],
    ["--exit-when", "never"],
    ["--nope"],
    ["--s", "80x24"],  # ambiguous: --screenshot or --size
    ["psod"],
    ["--demo", "psod"],
    ["--demo", "--", "pods"],
    # what only the whole parser knows
    ["-h"],
    ["--help"],
    ["--he"],
    ["--version"],
    ["--demo", "--version"],
    ["--v"],
    ["--help", "--version"],  # the first of the two acts
    ["-h", "--v"],
    ["--he", "--version"],
    ["-", "--version"],
    ["-1", "--version"],
    ["-hv", "--version"],
    ["--version", "--nope"],
    ["--demo", "--demo"],
    ["--size", "80x24", "--size", "90x30"],
    ["--size", "-5x4"],
    ["--screenshot", ""],
    ["--exit-when=data", "--read-only"],
    ["pods", "--json"],
    ["--demo", "pods"],
    ["pods", "--version"],
    ["cost", "--size", "80x24"],
]


def _outcome(parse: object, argv: list[str]) -> tuple[object, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            result: object = sorted(vars(parse(argv)).items())  # type: ignore[operator]
        except SystemExit as e:
            result = ("exit", e.code)
    return result, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("argv", ARGVS, ids=lambda a: " ".join(a) or "(none)")
def test_the_quick_parse_agrees_with_the_whole_parser(argv: list[str]) -> None:
    assert _outcome(main.parse_args, argv) == _outcome(lambda a: main.build_parser().parse_args(a), argv)


def test_the_app_alone_builds_no_subcommand_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused() -> None:
        raise AssertionError("the whole parser was built")

    monkeypatch.setattr(main, "build_parser", refused)
    assert main.parse_args(["--demo", "--size", "80x24"]).command is None
    assert main.parse_args([]).command is None
