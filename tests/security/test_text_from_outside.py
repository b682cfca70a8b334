"""Text from outside (pod names, env values, images, RunPod's errors, file names) never reaches the terminal or the
log as control sequences: not through the sanitiser itself, the CLI's tables and errors, the TUI's screens and
notifications, or the log file. `pods --json` stays faithful to the data."""

from __future__ import annotations

import io
import json
import logging
import os
import random
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from textual.widgets import Input, OptionList

from podtui.cli.main import main
from podtui.cli.output import SafeStream, safe_streams, write_table
from podtui.core.api import V2Api
from podtui.core.log_file import SafeLogFilter
from podtui.core.visible import visible
from podtui.sim.server import SimApiServer
from podtui.sim.simulator import Simulator
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.add_transfer import AddTransferScreen
from podtui.ui.widgets.pod_table import PodTable
from tests.helpers.hostile import CLIPBOARD, HOSTILE, unsafe_chars
from tests.helpers.pilot import loaded, polled, wait_until
from tests.helpers.sim import DEMO_IDS


@pytest.mark.parametrize("text", HOSTILE)
def test_nothing_a_terminal_acts_on_survives(text: str) -> None:
    assert unsafe_chars(visible(text)) == []
    assert unsafe_chars(visible(text, lines=True), newlines=True) == []
    if "\x1b" in text:
        assert "\\x1b" in visible(text)  # shown, as the escape it was


def test_random_text_of_every_kind() -> None:
    """Random code points from the ranges attacks use and from everyday text, cut at random places: the result
    is clean whatever the cuts, printable characters are kept, and a second pass changes nothing."""
    rng = random.Random(15)
    pools = [
        range(0, 0x20),
        range(0x7F, 0xA0),
        range(0x20, 0x7F),
        range(0x2000, 0x2070),
        range(0xD800, 0xE000),
        range(0x4E00, 0x4E40),
        range(0x1F600, 0x1F640),
    ]
    for _ in range(2000):
        text = "".join(chr(rng.choice(rng.choice(pools))) for _ in range(rng.randrange(1, 40)))
        out = visible(text)
        assert unsafe_chars(out) == [], repr(text)
        assert visible(out) == out
        cut = rng.randrange(len(text) + 1)
        assert visible(text[:cut]) + visible(text[cut:]) == out  # no state: pieces cannot rebuild a sequence
        kept = [ch for ch in text if ch.isprintable()]
        assert all(ch in out for ch in kept)


def test_what_the_escapes_look_like() -> None:
    assert visible("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert visible("x\u202ey") == "x<U+202E>y"
    assert visible("one\ntwo\rthree\tfour") == "one\\ntwo\\rthree\\tfour"
    assert visible("one\ntwo\r", lines=True) == "one\ntwo\\r"
    assert visible("bad\udcff") == "bad\\xff"  # a file name's undecodable byte
    assert visible("llama-lora 🦙 中文 é") == "llama-lora 🦙 中文 é"


# --- the CLI ---------------------------------------------------------------------------------------------------


@pytest.fixture
def hostile_pods(sim: SimApiServer, monkeypatch: pytest.MonkeyPatch) -> SimApiServer:
    """Every text field RunPod sends, for every demo pod, holds an attack; the CLI points at this simulator."""
    for i, pod in enumerate(sim.world.pods.values()):
        attack = HOSTILE[i % len(HOSTILE)]
        pod.name = f"pod{i}-{attack}"
        pod.image = f"img-{HOSTILE[(i + 1) % len(HOSTILE)]}"
        pod.location = f"loc-{HOSTILE[(i + 2) % len(HOSTILE)]}"
        pod.last_status_change = f"change-{HOSTILE[(i + 3) % len(HOSTILE)]}"
        pod.env = {"NOTE": HOSTILE[(i + 4) % len(HOSTILE)], f"K{HOSTILE[(i + 5) % len(HOSTILE)]}": "v"}
    monkeypatch.setenv("RUNPOD_API_KEY", sim.api_key)
    monkeypatch.setenv("RUNPOD_API_BASE_URL", sim.url)
    return sim


def test_cli_tables_and_messages(hostile_pods: SimApiServer, capfd: pytest.CaptureFixture[str]) -> None:
    for argv in (
        ["pods"],
        ["cost"],
        ["stop", DEMO_IDS["idle"], "--yes"],
        ["stop", "no-such\x1b]52;c;x\x07", "--yes"],
        ["terminate", f"{CLIPBOARD}\x1b[2J", "--yes"],
        ["exec", DEMO_IDS["stopped"], "--", "true"],
    ):
        main(argv)
        out, err = capfd.readouterr()
        assert unsafe_chars(out, newlines=True) == [], (argv, out)
        assert unsafe_chars(err, newlines=True) == [], (argv, err)
    main(["pods"])
    legends = ("locked: ", "$0!: ")  # the table's marks, explained under it
    table = [line for line in capfd.readouterr().out.splitlines() if not line.startswith(legends)]
    assert len(table) == 1 + len(hostile_pods.world.pods) + 2  # one line per pod: no name breaks a row


def test_pods_json_is_faithful(hostile_pods: SimApiServer, capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["pods", "--json"]) == 0
    out = capfd.readouterr().out
    assert unsafe_chars(out, newlines=True) == []  # JSON escapes: \u001b, \u202e
    names = {p["id"]: p["name"] for p in json.loads(out)}
    assert names == {pid: pod.name for pid, pod in hostile_pods.world.pods.items()}  # not altered


def test_cli_in_a_real_process_with_an_ascii_terminal(hostile_pods: SimApiServer) -> None:
    """Non-UTF-8 stdout (PYTHONIOENCODING=ascii, some Windows redirects): replacement characters, not a crash."""
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    hostile_pods.world.pods[DEMO_IDS["idle"]].name = "eval-ä100 🦙"
    r = subprocess.run([sys.executable, "-m", "podtui", "pods"], capture_output=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert b"eval-?100 ?" in r.stdout
    assert unsafe_chars(r.stdout.decode("ascii"), newlines=True) == []
    r = subprocess.run(
        [sys.executable, "-m", "podtui", "stop", "nö-such-pöd", "--yes"], capture_output=True, env=env, timeout=60
    )
    assert r.returncode == 1 and b"no pod" in r.stderr and b"Traceback" not in r.stderr


def test_the_stream_wrapper() -> None:
    inner = io.StringIO()
    stream = SafeStream(inner)
    for attack in HOSTILE:
        for ch in attack:  # one character at a time: a sequence split across writes
            stream.write(ch)
    stream.rewrite_line("progress 50%\x1b[2J")
    assert unsafe_chars(inner.getvalue().replace("\rprogress", "progress"), newlines=True) == []
    assert inner.getvalue().endswith("\rprogress 50%\\x1b[2J")
    with safe_streams():
        assert isinstance(sys.stdout, SafeStream) and isinstance(sys.stderr, SafeStream)
    assert not isinstance(sys.stdout, SafeStream)
    table = io.StringIO()
    write_table(table, [("NAME", "ID"), ("a\nb", "1"), ("中文", "2")])
    assert table.getvalue().splitlines() == ["NAME  ID", "a\\nb  1", "中文  2"]


# --- the log file -------------------------------------------------------------------------------------------


@pytest.fixture
def log_file(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "podtui.log"
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(SafeLogFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield path
    finally:
        root.removeHandler(handler)
        handler.close()


def test_one_record_one_line_whatever_it_quotes(log_file: Path) -> None:
    log = logging.getLogger("podtui.test")
    for attack in HOSTILE:
        log.warning("poll failed: %s", attack)
        log.warning(f"inline {attack}")
        try:
            raise RuntimeError(f"boom {attack}")
        except RuntimeError:
            log.exception("failed on %r", attack)
    text = log_file.read_text(encoding="utf-8")
    assert unsafe_chars(text, newlines=True) == []
    records = [line for line in text.splitlines() if line[:4].isdigit()]
    assert len(records) == 3 * len(HOSTILE)  # no forged record: "2026-12-01 ... INFO" only where podtui wrote one
    assert "all is well" not in "".join(line.split(": ", 1)[0] for line in records)


async def test_every_screen_with_hostile_data(hostile_pods: SimApiServer, make_app: Callable[..., PodtuiApp]) -> None:
    hostile_pods.world.pub_key = f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG9kZGtleQ comment{HOSTILE[0]}"
    app = make_app()
    seen: dict[str, list[str]] = {}

    def scan(name: str) -> None:
        text = "".join(seg.text for strip in app.screen._compositor.render_strips() for seg in strip)
        seen[name] = unsafe_chars(text)

    async with app.run_test(size=(130, 40)) as pilot:
        await loaded(pilot, app)
        scan("list")
        for row, key, name in (
            (0, "enter", "details"),
            (1, "enter", "details 2"),
            (2, "s", "stop question"),
            (2, "T", "terminate question"),
            (3, "r", "resume question"),
            (0, "u", "add transfer"),
            (0, "H", "hf check"),
            (0, "K", "keys"),
            (0, "question_mark", "help"),
            (0, "t", "transfers"),
            (0, "D", "doctor"),
        ):
            app.screen.query_one(PodTable).cursor_row = row
            await pilot.press(key)
            await pilot.pause(0.3)
            scan(name)
            if name.startswith("details"):
                for widget in app.screen.query("*"):
                    if widget.allow_vertical_scroll:
                        widget.scroll_end(animate=False)
                await pilot.pause()
                scan(name + ", environment")
            while len(app.screen_stack) > 2:
                app.pop_screen()
            await pilot.pause()
        # RunPod's error text in the status line and a notification
        hostile_pods.faults.add("graphql_error", f"refused {HOSTILE[3]} {HOSTILE[0]}")
        await polled(pilot, app)
        app.notify(f"stop failed: {HOSTILE[5]}")
        await pilot.pause()
        scan("stale, with an error")
        hostile_pods.faults.clear()
        await pilot.press("ctrl+p")
        await pilot.press(*"open")
        await wait_until(
            pilot,
            lambda: "pod0" in "".join(seg.text for strip in app.screen._compositor.render_strips() for seg in strip),
        )
        scan("palette")
    assert {name: "".join(sorted(set(bad))) for name, bad in seen.items() if bad} == {}
    assert len(seen) == 16


# --- names on a pod and on this machine, shown in the transfer dialog ------------------------------------------


@pytest.mark.parametrize("pod_name", ["eval-a100", "llama-lora-3090"])  # through the gateway; over direct SSH
async def test_a_pods_file_names_in_the_listing(
    full_sim: Simulator, sim_api: V2Api, make_full_app: Callable[..., PodtuiApp], tmp_path: Path, pod_name: str
) -> None:
    """`ls` through a terminal or a raw exec channel would hand the dialog names rewritten or raw: the listing
    gets every name exactly, shows it made visible, and refuses to put a name with controls in the path box."""
    pod = sim_api.fetch_snapshot().find(pod_name)
    workspace = full_sim.gateway.machine(full_sim.world.pods[pod.id]).workspace
    hostile = [h.replace("/", "_").replace("\x00", "") for h in HOSTILE]
    for i, name in enumerate(hostile):
        (workspace / f"f{i:02d}-{name}").write_bytes(b"x")
    os.mkdir(os.path.join(os.fsencode(workspace), b"bytes-\xff\xfe-dir"))
    (workspace / "plain file.bin").write_bytes(b"p")
    app = make_full_app(transfer_work_dir=tmp_path / "work")

    def drawn() -> str:
        return "".join(seg.text for strip in app.screen._compositor.render_strips() for seg in strip)

    async with app.run_test(size=(130, 44)) as pilot:
        await loaded(pilot, app)
        app.screen.query_one(PodTable).cursor_row = next(
            i for i, pid in enumerate(app.screen.query_one(PodTable).visible_ids) if pid == pod.id
        )
        await pilot.press("u")
        await wait_until(pilot, lambda: isinstance(app.screen, AddTransferScreen))
        await pilot.press("ctrl+l")
        listing = app.screen.query_one("#listing", OptionList)
        await wait_until(pilot, lambda: listing.option_count > len(hostile), 20)
        shown = [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]
        assert "bytes-\\xff\\xfe-dir/" in shown and "plain file.bin" in shown
        assert all(visible(f"f{i:02d}-{name}") in shown for i, name in enumerate(hostile))  # every name, exact
        assert unsafe_chars(drawn()) == []
        listing.highlighted = shown.index(visible(f"f00-{hostile[0]}"))
        await pilot.press("enter")
        await pilot.pause()
        remote = app.screen.query_one("#remote", Input)
        assert remote.value == "" and "holds control characters" in drawn()
        assert unsafe_chars(drawn()) == []
        listing.highlighted = shown.index("plain file.bin")
        await pilot.press("enter")
        assert remote.value == "plain file.bin"


def test_local_path_completion_skips_names_with_controls(tmp_path: Path) -> None:
    from podtui.ui.path_completion import complete_local

    (tmp_path / "ckpt-\x1b]52;c;cm0gLXJmIH4K\x1b\\\u202egnp.bin").write_bytes(b"")
    (tmp_path / "ckpt-plain.bin").write_bytes(b"")
    assert complete_local(str(tmp_path / "ck")) == str(tmp_path / "ckpt-plain.bin")
    (tmp_path / "ckpt-plain.bin").unlink()
    assert complete_local(str(tmp_path / "ck")) is None


async def test_the_hub_and_the_doctor_reports_with_hostile_words(make_app: Callable[..., PodtuiApp]) -> None:
    """What the Hub and a pod's own programs say reaches two screens as reports: each shows it made visible
    (and a digest shaped like markup is not parsed)."""
    from podtui.core.doctor.checks import Check, DoctorReport
    from podtui.core.hf.repo import RepoFile
    from podtui.core.hf.report import CheckLine, HubReport
    from podtui.ui.screens.doctor import DoctorScreen
    from podtui.ui.screens.hf_check import HfCheckScreen

    files = [RepoFile(f"w{i}-{h}", 10, sha256=f"[/x]{h}"[:12]) for i, h in enumerate(HOSTILE)]
    hub = HubReport(
        "org/model",
        "model",
        "http://hub",
        exists=True,
        gated=False,
        files=files,
        lines=[CheckLine("fail", f"refused: {h}", remedy=h) for h in HOSTILE[:6]],
    )
    doctor = DoctorReport(
        tuple(
            Check(f"c{i}", f"torch {h}", "warn", f"found {h}", remedy=h, command="true") for i, h in enumerate(HOSTILE)
        )
    )
    app = make_app()
    async with app.run_test(size=(130, 44)) as pilot:
        await loaded(pilot, app)
        pod = app.pods()[0]
        for screen, show in (
            (HfCheckScreen([pod], pod), lambda s: s._show(hub)),
            (DoctorScreen(pod), lambda s: s._show(doctor)),
        ):
            app.push_screen(screen)
            await pilot.pause(0.2)
            show(screen)
            await pilot.pause(0.2)
            text = "".join(seg.text for strip in app.screen._compositor.render_strips() for seg in strip)
            assert "\\x1b]52" in text, type(screen).__name__  # the words are there, made visible
            assert unsafe_chars(text) == [], type(screen).__name__
            app.pop_screen()
            await pilot.pause()


async def test_a_pod_folder_whose_name_starts_with_a_dash_lists(
    full_sim: Simulator, sim_api: V2Api, make_full_app: Callable[..., PodtuiApp], tmp_path: Path
) -> None:
    pod = sim_api.fetch_snapshot().find("eval-a100")
    workspace = full_sim.gateway.machine(full_sim.world.pods[pod.id]).workspace
    (workspace / "-x").mkdir()
    (workspace / "-x" / "inside.bin").write_bytes(b"i")
    app = make_full_app(transfer_work_dir=tmp_path / "work")
    async with app.run_test(size=(130, 44)) as pilot:
        await loaded(pilot, app)
        screen = AddTransferScreen(list(app.pods()), pod)
        await app.push_screen(screen)
        screen.query_one("#remote", Input).value = "-x/"
        screen.action_browse()
        listing = screen.query_one("#listing", OptionList)
        await wait_until(pilot, lambda: listing.option_count == 2, 20)  # "../" and what is inside, not empty
        assert str(listing.get_option_at_index(1).prompt) == "inside.bin"
