"""run_remote through the simulated gateway's PTY-only shell, including hostile setups: a chatty .bashrc, coloured
prompts, PROMPT_COMMAND noise, output that looks like markers, endless and binary output."""

from __future__ import annotations

import re
import time
from pathlib import Path

import paramiko
import pytest

from podtui.core.api import V2Api
from podtui.core.pod import Pod
from podtui.core.ssh.connect import SshSettings, connect_pod
from podtui.core.ssh.errors import RemoteTimeout
from podtui.core.ssh.remote import RemoteShell, open_remote, run_commands
from podtui.sim.simulator import Simulator
from tests.helpers.sim import DEMO_IDS


@pytest.fixture
def pod(sim_api: V2Api) -> Pod:
    return sim_api.fetch_snapshot().find(DEMO_IDS["idle"])  # gateway only: no direct SSH


def bashrc(full_sim: Simulator, pod: Pod, text: str) -> None:
    home = full_sim.root / "pods" / pod.id / "root"
    home.mkdir(parents=True, exist_ok=True)
    (home / ".bashrc").write_text(text)


def test_basic_commands_state_and_exit_codes(pod: Pod, ssh_settings: SshSettings) -> None:
    assert pod.direct_ssh is None
    with open_remote(pod, ssh_settings) as sh:
        assert sh.kind == "pty" and sh.session.connection is not None
        assert sh.session.connection.endpoint.mode == "gateway"
        assert sh.run("echo hello").output == "hello\n"
        assert sh.run("cd /tmp && export X=42").exit_code == 0
        r = sh.run('pwd; echo "$X"')
        assert r.output == "/tmp\n42\n"
        assert sh.run("false").exit_code == 1
        assert sh.run("(exit 7)").exit_code == 7
        assert sh.run("echo $RUNPOD_POD_ID").output == pod.id + "\n"
        assert sh.run("printf 'no newline'").output == "no newline"
        assert sh.run("echo err >&2").output == "err\n"


def test_stop_on_error(pod: Pod, ssh_settings: SshSettings) -> None:
    with open_remote(pod, ssh_settings) as sh:
        results = run_commands(sh, ["echo one", "false", "echo never"])
    assert [r.exit_code for r in results] == [0, 1]


def test_fake_nvidia_smi_reports_the_simulated_gpu(pod: Pod, ssh_settings: SshSettings) -> None:
    with open_remote(pod, ssh_settings) as sh:
        r = sh.run("nvidia-smi --query-gpu=name,utilization.gpu --format=csv,noheader,nounits")
    name, util = r.output.strip().split(", ")
    assert name == "NVIDIA A100 80GB PCIe" and 0 <= int(util) <= 2  # the idle pod


def test_hostile_shell_setup(full_sim: Simulator, pod: Pod, ssh_settings: SshSettings) -> None:
    bashrc(
        full_sim,
        pod,
        r"""
echo "Welcome! Here is some .bashrc chatter"
printf '\033[1;32mcoloured chatter\033[0m\n'
PS1='\[\033[01;32m\]\u@\h\[\033[00m\]:\[\033[01;34m\]\w\[\033[00m\]\n$ '
PROMPT_COMMAND='echo "PROMPT_COMMAND noise $RANDOM"; printf "\033]0;title\007"'
""",
    )
    with open_remote(pod, ssh_settings) as sh:
        assert sh.run("echo clean").output == "clean\n"
        assert sh.run("echo again; echo twice").output == "again\ntwice\n"


def test_output_that_looks_like_markers(pod: Pod, ssh_settings: SshSettings) -> None:
    with open_remote(pod, ssh_settings) as sh:
        fake = f"<<PT:{'0' * 16}:E1:0>>"
        r = sh.run(f"echo '{fake}'; echo '<<PT:%s:E2:%s>>'; echo after")
        assert r.output == f"{fake}\n<<PT:%s:E2:%s>>\nafter\n"
        # even with this session's own nonce, a marker for another command number is just text
        r = sh.run(f"echo '<<PT:{sh.nonce}:E99:5>>'")
        assert r.exit_code == 0 and r.output == f"<<PT:{sh.nonce}:E99:5>>\n"


def test_lines_longer_than_the_tty_canonical_limit(pod: Pod, ssh_settings: SshSettings) -> None:
    long = "x" * 20000
    with open_remote(pod, ssh_settings) as sh:
        r = sh.run(f"echo {long} | wc -c; echo {long}")
    count, echoed = r.output.rstrip("\n").split("\n")
    assert count == "20001" and echoed == long


def test_binary_output(pod: Pod, ssh_settings: SshSettings) -> None:
    with open_remote(pod, ssh_settings) as sh:
        r = sh.run("head -c 65536 /dev/urandom; echo; echo done")
        assert r.exit_code == 0 and r.output.endswith("done\n")
        assert sh.run("echo still fine").output == "still fine\n"


def test_command_that_never_ends(pod: Pod, ssh_settings: SshSettings) -> None:
    with open_remote(pod, ssh_settings) as sh:
        t = time.monotonic()
        with pytest.raises(RemoteTimeout, match="did not finish within 1 s") as e:
            sh.run("echo started; sleep 300", timeout_s=1)
        assert time.monotonic() - t < 5
        assert e.value.session_usable and "started" in e.value.output
        assert sh.run("echo usable").output == "usable\n"


def test_streaming_output(pod: Pod, ssh_settings: SshSettings) -> None:
    pieces: list[str] = []
    with open_remote(pod, ssh_settings) as sh:
        r = sh.run("for i in 1 2 3; do echo line$i; sleep 0.2; done", on_output=pieces.append)
    assert "".join(pieces) == "line1\nline2\nline3\n"
    assert r.output == "line1\nline2\nline3\n" and len(pieces) >= 2


def test_a_command_that_exits_the_shell(pod: Pod, ssh_settings: SshSettings) -> None:
    with open_remote(pod, ssh_settings) as sh:
        r = sh.run("echo bye; exit 4")
    assert r.exit_code == 4 and r.output.startswith("bye")


def test_history_gets_none_of_podtuis_lines(full_sim: Simulator, pod: Pod, ssh_settings: SshSettings) -> None:
    with open_remote(pod, ssh_settings) as sh:
        sh.run("echo secret-ish")
        r = sh.run("history")
    assert "secret-ish" not in r.output and "__pt_c" not in r.output
    assert not (full_sim.root / "pods" / pod.id / "root" / ".bash_history").exists()


def test_window_size_reaches_the_shell(pod: Pod, ssh_settings: SshSettings) -> None:
    with open_remote(pod, ssh_settings) as sh:
        # commands run with stdin from /dev/null (like ssh -n), so ask the tty itself
        assert sh.run("stty size </dev/tty").output == "50 250\n"
        sh.session.resize(132, 43)
        time.sleep(0.2)
        assert sh.run("stty size </dev/tty").output == "43 132\n"
        assert sh.run("cat").output == ""  # reads EOF at once instead of eating podtui's next line


def test_gateway_refuses_exec_and_sftp(pod: Pod, ssh_settings: SshSettings) -> None:
    conn = connect_pod(pod, ssh_settings)
    try:
        chan = conn.transport.open_session()
        chan.exec_command("nvidia-smi")
        err = chan.makefile_stderr("rb").read()
        assert b"Your SSH client doesn't support PTY" in err
        assert chan.recv_exit_status() == 1
        with pytest.raises(paramiko.SSHException, match=r"Channel closed|subsystem"):
            paramiko.SFTPClient.from_transport(conn.transport)
    finally:
        conn.close()


def test_banner_is_dropped(pod: Pod, ssh_settings: SshSettings) -> None:
    with open_remote(pod, ssh_settings) as sh:
        r = sh.run("echo x")
    assert "RUNPOD" not in r.output


def test_a_new_session_each_time_gets_a_new_nonce(pod: Pod, ssh_settings: SshSettings) -> None:
    nonces = set()
    for _ in range(2):
        with open_remote(pod, ssh_settings) as sh:
            nonces.add(sh.nonce)
            assert re.fullmatch(r"[0-9a-f]{16}", sh.nonce)
    assert len(nonces) == 2


def test_remote_shell_over_an_existing_connection(pod: Pod, ssh_settings: SshSettings, tmp_path: Path) -> None:
    conn = connect_pod(pod, ssh_settings)
    shell = RemoteShell(lambda: conn)
    with shell.open():
        assert shell.run("echo via connector").output == "via connector\n"
