"""run_remote keeps a bounded tail of a command's output, says what it dropped, and honours its timeout in a flood:
through the gateway's PTY, over a direct exec channel, streamed, in the (output, exit_code) contract and in
`podtui exec`."""

from __future__ import annotations

import io
import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from podtui.cli.ssh_cmd import EXIT_TIMEOUT, cmd_exec
from podtui.core.api import V2Api
from podtui.core.config import Config, ConfigError, load_config
from podtui.core.paths import Paths
from podtui.core.pod import Pod
from podtui.core.services import Services
from podtui.core.ssh.connect import SshSettings
from podtui.core.ssh.errors import RemoteTimeout
from podtui.core.ssh.remote import MAX_OUTPUT_BYTES, RunVia, _Buffer, open_remote, run_remote
from podtui.sim.simulator import Simulator
from tests.helpers.sim import DEMO_IDS, needs_sshd

CAP = 1 << 20
FLOOD = 20_000_000  # bytes of `yes`: twenty times the cap
LAST = "the-last-line"
FLOOD_CMD = f"yes | head -c {FLOOD}; echo {LAST}; (exit 3)"
# the same flood, which then leaves a mark in the pod's /tmp: a consumer that waits for it has surely fallen behind
SLOW_CMD = f"yes | head -c {FLOOD}; touch /tmp/flood-written; echo {LAST}; (exit 3)"


def behind(full_sim: Simulator, pod_id: str) -> Callable[[], None]:
    """Blocks the first time it is called until the pod has written the whole flood: however fast this machine
    is, the consumer is then more than the cap behind (a sleep per call would depend on the flood's speed)."""
    mark = full_sim.root / "pods" / pod_id / "tmp" / "flood-written"
    first = [True]

    def wait() -> None:
        if first[0]:
            first[0] = False
            end = time.monotonic() + 60
            while not mark.exists():
                assert time.monotonic() < end, f"the pod never wrote {mark}"
                time.sleep(0.05)

    return wait


@pytest.fixture
def gateway_pod(sim_api: V2Api) -> Pod:
    return sim_api.fetch_snapshot().find(DEMO_IDS["idle"])  # gateway only


@pytest.fixture
def direct_pod(sim_api: V2Api) -> Pod:
    return sim_api.fetch_snapshot().find(DEMO_IDS["train"])  # direct SSH: an exec channel


def raw_size(text: str, pty: bool) -> int:
    """Bytes the pod sent for `text`: a terminal turns each newline into CR LF, which clean() undoes."""
    return len(text.encode()) + (text.count("\n") if pty else 0)


def assert_kept_tail(output: str) -> None:
    assert len(output.encode()) <= CAP
    lines = output.split("\n")
    assert lines[-2:] == [LAST, ""] and set(lines[:-2]) == {"y"}  # whole lines: the first is not cut in half


@pytest.mark.parametrize("route", ["gateway", pytest.param("exec", marks=needs_sshd)])
def test_a_flood_keeps_its_tail_and_says_what_went(
    route: RunVia, gateway_pod: Pod, direct_pod: Pod, ssh_settings: SshSettings
) -> None:
    pod = gateway_pod if route == "gateway" else direct_pod
    with open_remote(pod, ssh_settings, via=route, max_output_bytes=CAP) as sh:
        assert sh.kind == ("pty" if route == "gateway" else "exec")
        r = sh.run(FLOOD_CMD, timeout_s=100)
        assert r.exit_code == 3
        assert r.truncated and r.dropped_bytes > FLOOD - CAP
        assert_kept_tail(r.output)
        pty = sh.kind == "pty"
        assert r.dropped_bytes + raw_size(r.output, pty) == raw_size("y\n" * (FLOOD // 2) + LAST + "\n", pty)
        # the shell goes on, and a small output is whole again
        r = sh.run("echo after")
        assert r.output == "after\n" and not r.truncated and r.dropped_bytes == 0


@pytest.mark.parametrize("route", ["gateway", pytest.param("exec", marks=needs_sshd)])
def test_a_flood_that_never_ends_times_out(
    route: RunVia, gateway_pod: Pod, direct_pod: Pod, ssh_settings: SshSettings
) -> None:
    pod = gateway_pod if route == "gateway" else direct_pod
    with open_remote(pod, ssh_settings, via=route, max_output_bytes=CAP) as sh:
        with pytest.raises(RemoteTimeout, match="did not finish within 3 s") as e:
            sh.run("yes", timeout_s=3)
        assert len(e.value.output.encode()) <= CAP and set(e.value.output.split("\n")[:-1]) <= {"y"}
        assert re.search(r"; [\d,]+ bytes of its output were dropped, past the 1 MiB kept$", str(e.value))
        if sh.kind == "pty":  # ctrl+c stopped it; an exec channel has no terminal to send one to, so it closed
            assert e.value.session_usable and sh.run("echo usable").output == "usable\n"
        else:
            assert not e.value.session_usable


def test_streamed_output_goes_out_whole_when_it_is_read_in_time(gateway_pod: Pod, ssh_settings: SshSettings) -> None:
    got: list[str] = []
    with open_remote(gateway_pod, ssh_settings, max_output_bytes=CAP) as sh:
        r = sh.run(f"yes | head -c {FLOOD // 4}; echo {LAST}; (exit 3)", timeout_s=100, on_output=got.append)
    text = "".join(got)
    assert r.exit_code == 3 and not r.truncated
    assert text == "y\n" * (FLOOD // 8) + LAST + "\n"
    assert len(r.output.encode()) <= CAP and text.endswith(r.output)  # the result keeps the tail only


def test_streamed_output_read_too_slowly_is_dropped_and_counted(
    full_sim: Simulator, gateway_pod: Pod, ssh_settings: SshSettings
) -> None:
    got: list[str] = []
    wait = behind(full_sim, gateway_pod.id)

    def slow(text: str) -> None:
        got.append(text)
        wait()

    with open_remote(gateway_pod, ssh_settings, max_output_bytes=CAP) as sh:
        r = sh.run(SLOW_CMD, timeout_s=100, on_output=slow)
    assert r.exit_code == 3 and r.truncated
    text = "".join(got)
    assert text.endswith(f"y\n{LAST}\n")
    sent = raw_size("y\n" * (FLOOD // 2) + LAST + "\n", True)
    # a drop between a CR and its LF counts one of the two as dropped and the kept one as a whole newline (CR LF):
    # one byte per drop at most, either way
    assert sent - len(got) <= r.dropped_bytes + raw_size(text, True) <= sent + len(got)
    assert r.dropped_bytes > sent // 2  # most of it went: the reader was behind


def test_the_contract_says_it_truncated(sim_api: V2Api, ssh_settings: SshSettings) -> None:
    output, code = run_remote(
        DEMO_IDS["idle"],
        ssh_settings.key_path,
        ["echo first", FLOOD_CMD],
        per_command_timeout=100,
        api=sim_api,
        settings=ssh_settings,
        max_output_bytes=CAP,
    )
    assert code == 3
    note, rest = output.split("\n", 1)
    assert re.fullmatch(r"\[podtui: output truncated: the first [\d,]+ bytes were dropped, the last 1 MiB kept\]", note)
    assert len(rest) <= CAP and rest.endswith(f"y\ny\n{LAST}\n")
    output, code = run_remote(
        DEMO_IDS["idle"],
        ssh_settings.key_path,
        ["echo small"],
        api=sim_api,
        settings=ssh_settings,
        max_output_bytes=CAP,
    )
    assert (output, code) == ("small\n", 0)


class SlowOut(io.StringIO):
    def __init__(self, wait: Callable[[], None]) -> None:
        super().__init__()
        self.wait = wait

    def write(self, s: str) -> int:
        self.wait()
        return super().write(s)


def test_cli_exec_notes_dropped_output_on_stderr(
    full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings, paths: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    session = Services(
        sim_api,
        config=Config(run_remote_max_output_mb=1.0),
        paths=paths,
        clock=time.time,
        ssh_settings=lambda: ssh_settings,
        key_path=lambda: ssh_settings.key_path or Path("unused"),
    )
    out = SlowOut(behind(full_sim, DEMO_IDS["idle"]))
    code = cmd_exec(session, "eval-a100", [SLOW_CMD], "auto", 100.0, out=out)
    assert code == 3 and out.getvalue().endswith(f"y\n{LAST}\n")
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and re.match(r"podtui: output truncated: [\d,]+ bytes were dropped", err[0])
    out = SlowOut(lambda: None)
    assert cmd_exec(session, "eval-a100", ["yes"], "auto", 3.0, out=out) == EXIT_TIMEOUT
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "did not finish within 3 s" in err[0]


def test_the_cap_is_a_config_key(paths: Paths) -> None:
    assert Config().run_remote_max_output_mb * (1 << 20) == MAX_OUTPUT_BYTES
    paths.config_file.parent.mkdir(parents=True, exist_ok=True)
    paths.config_file.write_text("run_remote_max_output_mb = 8\n")
    assert load_config(paths).run_remote_max_output_mb == 8.0
    for bad in ("0", "-1", '"64"', "true", "1e9"):
        paths.config_file.write_text(f"run_remote_max_output_mb = {bad}\n")
        with pytest.raises(ConfigError, match="run_remote_max_output_mb must be a number from 1 to 65536"):
            load_config(paths)


def test_a_marker_split_across_reads_at_the_cap_is_found() -> None:
    import threading

    marker = re.compile(rb"<<PT:abc:E1:(\d+)>>\r?\n")
    for split in range(1, 20):
        buf = _Buffer(4096)
        buf.arm(marker)
        payload = b"y\n" * 10_000 + b"\n<<PT:abc:E1:42>>\n" + b"after"
        cut = len(payload) - 5 - split
        buf.feed(payload[:cut])
        assert buf.found is None and len(buf.data) <= 4096
        buf.feed(payload[cut:])
        found = buf.found
        assert found is not None and found.groups == (b"42",)
        assert found.dropped + len(found.before) == 20_001 and found.before.endswith(b"y\n\n")
        assert bytes(buf.data) == b"after"
    # and a waiter sees it arrive from another thread
    buf = _Buffer(4096)
    threading.Timer(0.1, buf.feed, args=(b"x" * 100_000 + b"<<PT:abc:E1:0>>\n",)).start()
    found = buf.wait_for(marker, time.monotonic() + 30)
    assert found.dropped == 100_000 - 4096 and len(found.before) == 4096
