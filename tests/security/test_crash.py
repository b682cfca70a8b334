"""A crash never prints a secret: whatever its cause, the terminal gets one line naming the log, and the log gets a
traceback without local variables, with every secret masked. Forced here inside a screen whose data holds a token."""

from __future__ import annotations

import logging
import shlex
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from podtui.core.crash import format_exception, one_line
from podtui.core.log_file import PrivateRotatingFileHandler, SafeLogFilter
from podtui.sim.demo import demo_pods
from podtui.sim.server import SimApiServer
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.pod_detail import PodDetailScreen
from tests.helpers.hostile import unsafe_chars
from tests.helpers.pilot import loaded
from tests.helpers.tmux import Tmux

TOKEN = next(p.env["HF_TOKEN"] for p, _ in demo_pods() if "HF_TOKEN" in p.env)  # in the demo's training pod


class Boom(RuntimeError):
    pass


@pytest.fixture
def log_file(tmp_path: Path) -> Iterator[Path]:
    """podtui's own kind of log handler, at a path longer than a terminal is wide."""
    path = tmp_path / ("a-long-folder-name-" * 6) / "podtui.log"
    path.parent.mkdir()
    handler = PrivateRotatingFileHandler(path, encoding="utf-8")
    handler.addFilter(SafeLogFilter())
    logging.getLogger().addHandler(handler)
    try:
        yield path
    finally:
        logging.getLogger().removeHandler(handler)
        handler.close()


def test_the_report_has_no_locals_no_secret_and_no_control_characters() -> None:
    from podtui.core import secret

    secret.register(TOKEN)

    def inner(env: dict[str, str]) -> None:
        token_in_a_local = env["HF_TOKEN"]  # noqa: F841  (what Textual's report would print)
        raise Boom(f"while showing {env['HF_TOKEN']}\x1b]52;c;cm0gLXJmIH4K\x07\nforged line")

    try:
        try:
            inner({"HF_TOKEN": TOKEN})
        except Boom as e:
            raise ValueError("outer") from e
    except ValueError as e:
        report = format_exception(e)
    assert TOKEN not in report and "token_in_a_local" not in report  # no locals
    assert "The above exception was the direct cause" in report and report.index("Boom") < report.index("outer")
    assert unsafe_chars(report, newlines=True) == []
    assert "\nforged line" not in report  # the message stays on its line
    assert "\n" not in one_line(ValueError("x\ny"), Path("/a\nb"))


async def test_a_crash_inside_a_screen(
    make_app: Callable[..., PodtuiApp], log_file: Path, monkeypatch: pytest.MonkeyPatch, sim: SimApiServer
) -> None:
    shown = PodDetailScreen.show_feed

    def crashing(self: PodDetailScreen, feed: object) -> None:
        shown(self, feed)  # type: ignore[arg-type]
        local_with_env = dict(self.pod.env) if self.pod else {}  # noqa: F841
        raise Boom("forced")

    monkeypatch.setattr(PodDetailScreen, "show_feed", crashing)
    app = make_app()
    output = capture_exit(app)
    with pytest.raises(Boom):
        async with app.run_test(size=(120, 32)) as pilot:
            await loaded(pilot, app)
            app.navigator.open_details("q7x2m9fk4r8t1a")  # llama-lora-3090: HF_TOKEN in its environment
            await pilot.pause(0.5)
    assert app.return_code == 1
    printed = output[0]
    assert printed.startswith("podtui stopped on an unexpected error (Boom); the details are in ")
    assert "\n" not in printed.strip()  # one line, however long: the terminal wraps it, Rich does not
    assert TOKEN not in printed and "Traceback" not in printed
    text = log_file.read_text(encoding="utf-8")
    assert "Traceback" in text and "Boom: forced" in text and "show_feed" in text
    assert TOKEN not in text and "local_with_env" not in text  # no locals


def capture_exit(app: PodtuiApp) -> list[str]:
    """What Textual prints once the screen is gone (its exit renderables, pre-rendered to segments), captured
    as it is printed."""
    printed: list[str] = []
    original = app._print_error_renderables

    def capture() -> None:
        printed.append("".join(seg.text for r in app._exit_renderables for seg in getattr(r, "segments", [])))
        original()

    app._print_error_renderables = capture  # type: ignore[method-assign]
    return printed


async def test_a_crash_in_textuals_input_thread(make_app: Callable[..., PodtuiApp], log_file: Path) -> None:
    """Textual's input thread reports its crash with a rich traceback of the exception, bypassing the app's
    exception handler: it gets the same treatment."""
    import rich.traceback

    app = make_app()
    output = capture_exit(app)
    async with app.run_test(size=(120, 32)) as pilot:
        await loaded(pilot, app)
        try:
            try:
                raise OSError("the cause")
            except OSError as cause:
                raise Boom(f"reading input failed near {TOKEN}\x1b]52;c;eA==\x07") from cause
        except Boom:
            trace = rich.traceback.Traceback()  # as linux_driver._run_input_thread makes it, then calls panic
        app.panic(trace)
    printed = output[0]
    assert app.return_code == 1
    assert printed.startswith("podtui stopped on an unexpected error (") and "Boom" in printed  # not its cause
    assert TOKEN not in printed and "Traceback" not in printed and "reading input failed" not in printed
    text = log_file.read_text(encoding="utf-8")
    assert "crashed in Textual's input thread" in text and "reading input failed near" in text
    assert TOKEN not in text and unsafe_chars(text, newlines=True) == []


@pytest.mark.tmux
def test_a_crash_in_the_real_app(tmux: Tmux, isolated_home: Path) -> None:
    """The real app in a real terminal, crashed in the details of the pod whose environment holds a token: the
    terminal shows one line naming the log, and neither shows the token."""
    crash_after = (
        "import sys; import podtui.ui.screens.pod_detail as d; shown = d.PodDetailScreen.show_feed\n"
        "def crashing(self, feed):\n"
        "    shown(self, feed)\n"
        "    env = dict(self.pod.env)\n"
        "    raise RuntimeError('forced for the test')\n"
        "d.PodDetailScreen.show_feed = crashing\n"
        "from podtui.cli.main import main\n"
        "sys.exit(main(['--demo']))\n"
    )
    script = isolated_home / "crash.py"
    script.write_text(crash_after)
    tmux.start(
        f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}", width=120, height=28
    )  # under 30 rows: Enter opens the details screen
    tmux.wait_for("llama-lora-3090")
    tmux.keys("j", "j", "Enter")
    screen = tmux.wait_for("EXIT=", timeout=30)
    assert "EXIT=1" in screen
    assert "podtui stopped on an unexpected error (RuntimeError); the details are in" in screen
    assert TOKEN not in screen and "Traceback" not in screen and "HF_TOKEN" not in screen
    logs = list((isolated_home / "state").rglob("podtui.log"))
    assert logs, "no log written"
    deadline = time.monotonic() + 5
    while "forced for the test" not in logs[0].read_text() and time.monotonic() < deadline:
        time.sleep(0.1)
    text = logs[0].read_text()
    assert "RuntimeError: forced for the test" in text and "env = dict" not in text
    assert TOKEN not in text
