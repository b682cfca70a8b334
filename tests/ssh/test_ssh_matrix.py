"""SSH faults as the user meets them: through run_remote/open_remote, `podtui exec`, and a console in the app.

What the rest of tests/ssh/ covers is not repeated here: a wrong key and a changed gateway key at connect level, a
drop while a console shell idles, reconnect give-ups, and connect_pod against a gateway that hangs after its banner.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import paramiko
import pytest
from textual.pilot import Pilot

from podtui.console.widget import TerminalView
from podtui.core.api import V2Api
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.errors import ShellClosed, Unreachable
from podtui.core.ssh.hostkeys import pod_name
from podtui.core.ssh.keys import KeyFile, generate_dedicated_key
from podtui.core.ssh.remote import open_remote, run_remote
from podtui.sim.simulator import Simulator
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.pod_list import PodListScreen
from tests.helpers.pilot import loaded, wait_until
from tests.helpers.sim import DEMO_IDS, DIRECT_POD, GATEWAY_POD, needs_sshd

SIZE = (98, 30)  # the one-screen flow: `c` opens the consoles' screen (docs/architecture.md#panes)


def returns_within(seconds: float, call: Callable[[], Any]) -> Any:
    """Run `call` on a thread: a hang fails the test instead of stalling the suite. Returns what it returned,
    or the exception it raised."""
    box: list[Any] = []

    def target() -> None:
        try:
            box.append(call())
        except BaseException as e:  # handed back to the test
            box.append(e)

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(seconds)
    assert box, f"still hanging after {seconds} s"
    return box[0]


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = int(s.getsockname()[1])
    s.close()  # nothing listens there now: connecting is refused
    return port


def podtui(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "podtui", *args], capture_output=True, text=True, env=env, timeout=60)


def one_clean_line(stderr: str) -> str:
    """What the user reads: one line, no traceback, no API key."""
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1, stderr
    return stderr.strip()


# --- refused connection ---------------------------------------------------------------------------------


def test_refused_connection(sim_api: V2Api, ssh_settings: SshSettings, full_cli_env: dict[str, str]) -> None:
    ssh_settings.gateway = ("127.0.0.1", closed_port())
    with pytest.raises(Unreachable, match=r"cannot reach eval-a100 \(gateway .*\): Connection refused"):
        run_remote(DEMO_IDS["idle"], commands=["echo never"], api=sim_api, settings=ssh_settings)
    r = podtui(
        {**full_cli_env, "PODTUI_SSH_GATEWAY": f"127.0.0.1:{ssh_settings.gateway[1]}"},
        "exec",
        GATEWAY_POD,
        "--",
        "echo",
        "never",
    )
    line = one_clean_line(r.stderr)
    assert r.returncode == 255 and r.stdout == ""
    assert line.startswith("podtui: ssh: cannot reach eval-a100") and "Connection refused" in line


# --- auth failure: the key is not registered on the account ----------------------------------------------


def test_auth_failure_in_exec(full_sim: Simulator, full_cli_env: dict[str, str], user_key: KeyFile) -> None:
    full_sim.world.set_pub_key("")  # the user's key is not (or no longer) registered
    full_sim.world.restart(DEMO_IDS["idle"])  # on the account when the pod (eval-a100) started
    r = podtui(full_cli_env, "exec", GATEWAY_POD, "--", "echo", "never")
    line = one_clean_line(r.stderr)
    assert r.returncode == 255 and r.stdout == ""
    assert str(user_key.path) in line and "podtui keys setup" in line and "refused every key" in line


async def start_console(pilot: Pilot[None], app: PodtuiApp, down: int = 1) -> TerminalView:
    """`c` on a pod (down=1: eval-a100, gateway only), without waiting for a prompt."""
    await loaded(pilot, app)
    for _ in range(down):
        await pilot.press("j")
    await pilot.press("c")
    await wait_until(pilot, lambda: isinstance(app.focused, TerminalView), 10)
    view = app.focused
    assert isinstance(view, TerminalView)
    return view


def console_text(view: TerminalView) -> str:
    return view.link.emulator.text()


async def back_to_pods_and_again(pilot: Pilot[None], app: PodtuiApp) -> None:
    """The app still answers keys: leave the console, see the pod list, come back."""
    await pilot.press("ctrl+right_square_bracket", "escape")
    await wait_until(pilot, lambda: isinstance(app.screen, PodListScreen), 5)
    await pilot.press("C")
    await wait_until(pilot, lambda: not isinstance(app.screen, PodListScreen), 5)


async def test_auth_failure_in_a_console(
    console_app: Callable[[], PodtuiApp], full_sim: Simulator, ssh_settings: SshSettings, tmp_path: Path
) -> None:
    ssh_settings.key_path = generate_dedicated_key(tmp_path / "unregistered").path
    app = console_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        view = await start_console(pilot, app)
        await wait_until(pilot, lambda: "could not connect" in console_text(view), 10)
        text = console_text(view)
        assert "refused every key" in text.replace("\n", "") and "podtui keys setup" in text.replace("\n", "")
        assert view.link.state == "closed" and view.link.title.endswith("closed")
        await wait_until(pilot, lambda: any("refused every key" in n.message for n in app._notifications), 5)
        await back_to_pods_and_again(pilot, app)
        assert view.link.gaps == 0  # a refused key is not retried in a loop


# --- host key changed (direct SSH: the pinned key differs) ------------------------------------------------


@needs_sshd
def test_changed_host_key_is_refused_until_forgotten(full_cli_env: dict[str, str], sim_api: V2Api) -> None:
    r = podtui(full_cli_env, "exec", DIRECT_POD, "--", "echo", "first")
    assert (r.returncode, r.stdout) == (0, "first\n"), r.stderr
    known = Path(os.environ["XDG_DATA_HOME"]) / "podtui" / "known_hosts"
    pod_id = DEMO_IDS["train"]
    keys = paramiko.HostKeys(str(known))
    assert pod_name(pod_id) in keys  # pinned to the pod on first use
    # the pod now presents another key than the pinned one
    del keys[pod_name(pod_id)]
    impostor = paramiko.Ed25519Key.from_private_key_file(str(generate_dedicated_key(known.parent / "other").path))
    keys.add(pod_name(pod_id), impostor.get_name(), impostor)
    keys.save(str(known))
    r = podtui(full_cli_env, "exec", DIRECT_POD, "--", "echo", "never")
    line = one_clean_line(r.stderr)
    assert r.returncode == 255 and r.stdout == ""
    assert "REFUSED" in line and "has changed" in line and f"podtui ssh forget {pod_id}" in line
    assert pod_name(pod_id) in paramiko.HostKeys(str(known))  # the pin is not replaced behind the user's back
    r = podtui(full_cli_env, "ssh", "forget", DIRECT_POD)
    assert r.returncode == 0 and "forgot the pinned direct-SSH host key of llama-lora-3090" in r.stdout
    r = podtui(full_cli_env, "exec", DIRECT_POD, "--", "echo", "again")
    assert (r.returncode, r.stdout) == (0, "again\n"), r.stderr


# --- connection dropped mid-command ------------------------------------------------------------------------


def drop_when(
    full_sim: Simulator, seen: Callable[[], bool], drop: Callable[[], object] | None = None
) -> threading.Thread:
    def watch() -> None:
        for _ in range(400):
            if seen():
                (drop or full_sim.gateway.drop_connections)()
                return
            threading.Event().wait(0.025)

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    return t


def test_dropped_mid_command_in_open_remote(full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings) -> None:
    pod = sim_api.fetch_snapshot().find(DEMO_IDS["idle"])
    pieces: list[str] = []

    def session() -> Any:
        with open_remote(pod, ssh_settings) as sh:
            drop_when(full_sim, lambda: "started" in "".join(pieces))
            return sh.run("echo started; sleep 30", timeout_s=60, on_output=pieces.append)

    e = returns_within(20, session)
    assert isinstance(e, ShellClosed), e
    assert "dropped while 'echo started; sleep 30' was running" in str(e) and "may not have finished" in str(e)
    assert "".join(pieces) + e.output == "started\n"  # what it printed before the drop reached the caller
    with open_remote(pod, ssh_settings) as sh:  # nothing is left broken
        assert sh.run("echo fine").output == "fine\n"


@needs_sshd
def test_dropped_mid_command_over_direct_ssh(full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings) -> None:
    """The exec channel into real OpenSSH, cut by killing the sshd process serving the connection."""
    pod = sim_api.fetch_snapshot().find(DIRECT_POD)
    assert pod is not None and pod.direct_ssh_command
    pieces: list[str] = []

    def session() -> Any:
        with open_remote(pod, ssh_settings, "exec") as sh:
            assert sh.kind == "exec"
            drop_when(full_sim, lambda: "started" in "".join(pieces), full_sim.sshds[pod.id].drop_connections)
            return sh.run("echo started; sleep 30", timeout_s=60, on_output=pieces.append)

    e = returns_within(20, session)
    assert isinstance(e, ShellClosed), e
    assert "dropped while 'echo started; sleep 30' was running" in str(e) and "may not have finished" in str(e)
    assert "".join(pieces) + e.output == "started\n"
    with open_remote(pod, ssh_settings, "exec") as sh:
        assert sh.run("echo fine").output == "fine\n"


def test_dropped_mid_command_in_exec(full_sim: Simulator, full_cli_env: dict[str, str]) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "podtui", "exec", GATEWAY_POD, "--", "echo started; sleep 30"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=full_cli_env,
    )
    assert proc.stdout is not None
    # output streams as it comes (its last newline waits: it may be the start of podtui's end marker)
    first = returns_within(30, lambda: proc.stdout.read(len("started")))  # type: ignore[union-attr]
    assert first == "started"
    full_sim.gateway.drop_connections()
    try:
        out, err = proc.communicate(timeout=20)  # no hang
    finally:
        proc.kill()
    line = one_clean_line(err)
    assert proc.returncode == 255 and out.strip() == ""
    assert line.startswith("podtui: ssh: the connection to eval-a100") and "dropped while" in line


# --- a gateway that hangs ------------------------------------------------------------------------------------


async def test_gateway_hanging_after_its_ssh_banner_never_hangs_the_app(
    console_app: Callable[[], PodtuiApp], full_sim: Simulator, ssh_settings: SshSettings
) -> None:
    full_sim.gateway.hang_after_banner = True
    ssh_settings.connect_timeout_s = 4.0  # room for a loaded machine to open the console before it gives up
    app = console_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        view = await start_console(pilot, app)
        assert view.link.state == "connecting"
        await back_to_pods_and_again(pilot, app)  # the UI answers while the connection hangs
        await wait_until(pilot, lambda: "could not connect" in console_text(view), 15)
        said = console_text(view).replace("\n", "")
        assert "eval-a100" in said and "did not answer" in said, said
        assert view.link.state == "closed"
        await wait_until(pilot, lambda: any("did not answer" in n.message for n in app._notifications), 5)


def test_gateway_hanging_after_its_ssh_banner_in_run_remote(
    full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings
) -> None:
    full_sim.gateway.hang_after_banner = True
    ssh_settings.connect_timeout_s = 1.0
    e = returns_within(
        20, lambda: run_remote(DEMO_IDS["idle"], commands=["echo x"], api=sim_api, settings=ssh_settings)
    )
    assert isinstance(e, Unreachable) and "eval-a100" in str(e) and "did not answer within 1 s" in str(e), e


def test_shell_silent_after_the_welcome_banner(full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings) -> None:
    full_sim.gateway.hang_after_welcome = True
    pod = sim_api.fetch_snapshot().find(DEMO_IDS["idle"])

    def attempt() -> None:
        with open_remote(pod, ssh_settings, ready_timeout_s=1.0):
            pass

    e = returns_within(20, attempt)
    assert isinstance(e, ShellClosed), e
    assert "did not become ready within 1 s" in str(e) and "Enjoy your Pod" in str(e)
    full_sim.gateway.hang_after_welcome = False
    with open_remote(pod, ssh_settings) as sh:
        assert sh.run("echo back").output == "back\n"


def test_exec_on_a_silent_shell_gives_up_within_its_timeout(full_sim: Simulator, full_cli_env: dict[str, str]) -> None:
    full_sim.gateway.hang_after_welcome = True
    r = podtui(full_cli_env, "exec", "--timeout", "2", GATEWAY_POD, "--", "echo", "never")
    line = one_clean_line(r.stderr)
    assert r.returncode == 255 and r.stdout == ""
    # the wait for a prompt is the command's own limit here, not the default 20 s
    assert "did not become ready within 2 s" in line and "Enjoy your Pod" in line, line


async def test_console_on_a_shell_silent_after_the_welcome_banner(
    console_app: Callable[[], PodtuiApp], full_sim: Simulator
) -> None:
    full_sim.gateway.hang_after_welcome = True
    app = console_app()
    async with app.run_test(size=SIZE) as pilot:
        view = await start_console(pilot, app)
        await wait_until(pilot, lambda: "Enjoy your Pod" in console_text(view), 10)
        await pilot.press(*"ls", "enter")  # goes nowhere, breaks nothing
        await back_to_pods_and_again(pilot, app)
        await pilot.press("x")  # close it: connected, so podtui asks first
        await pilot.press("y")
        await wait_until(pilot, lambda: not app.consoles.links, 10)
        assert app.is_running


# --- a shell that exits at once --------------------------------------------------------------------------------


def test_shell_that_exits_at_once(
    full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings, full_cli_env: dict[str, str]
) -> None:
    full_sim.gateway.shell_exits_with = 3
    e = returns_within(
        20, lambda: run_remote(DEMO_IDS["idle"], commands=["echo x"], api=sim_api, settings=ssh_settings)
    )
    assert isinstance(e, ShellClosed) and "exited at once with status 3" in str(e), e
    r = podtui(full_cli_env, "exec", GATEWAY_POD, "--", "echo", "x")
    line = one_clean_line(r.stderr)
    assert r.returncode == 255 and r.stdout == "" and "exited at once with status 3" in line


async def test_console_on_a_shell_that_exits_at_once(console_app: Callable[[], PodtuiApp], full_sim: Simulator) -> None:
    full_sim.gateway.shell_exits_with = 3
    app = console_app()
    async with app.run_test(size=SIZE) as pilot:
        view = await start_console(pilot, app)
        await wait_until(pilot, lambda: "the shell exited with status 3" in console_text(view), 10)
        await pilot.pause(0.5)
        assert view.link.state == "closed" and view.link.gaps == 0  # stays closed: no reconnect loop
        assert "Enjoy your Pod" in console_text(view)  # what it printed first is kept
        full_sim.gateway.shell_exits_with = None  # fixed on the pod: R opens a new shell
        await pilot.press("ctrl+right_square_bracket", "R")
        await wait_until(
            pilot,
            lambda: (
                view.link.state == "connected"
                and any(ln.endswith("/workspace#") for ln in view.link.emulator.screen_lines())
            ),
            15,
        )
        assert "the shell exited with status 3" in console_text(view)


@pytest.fixture(autouse=True)
def _no_leftover_switches(full_sim: Simulator) -> Iterator[None]:
    yield
    full_sim.gateway.hang_after_banner = full_sim.gateway.hang_after_welcome = False
    full_sim.gateway.shell_exits_with = None
