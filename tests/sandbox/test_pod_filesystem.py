"""A simulated pod's processes see a pod, not this machine: /workspace, /root and /tmp are the pod's own folders
(the ones the simulator keeps in its sandbox), everything else is this machine's, read-only, and nothing a pod
does reaches this machine's files. Every way in is checked: the gateway's PTY shell, exec and PTY over direct
SSH (a real OpenSSH sshd), SFTP, a process the simulator starts itself, the CLI, and the programs those run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import paramiko
import pytest

from podtui.core.api import V2Api
from podtui.core.demo_sandbox import SANDBOX_ENV
from podtui.core.ssh.connect import SshSettings, connect_pod
from podtui.core.ssh.keys import KeyFile
from podtui.core.ssh.remote import RemoteShell, open_remote
from podtui.sim.clock import SimClock
from podtui.sim.demo import demo_world
from podtui.sim.pod_view import ENTER, NOT_ISOLATED, namespaces_work
from podtui.sim.relay import install_runpodctl
from podtui.sim.simulator import Simulator
from tests.helpers.sandbox import out
from tests.helpers.sim import DEMO_IDS, machine, needs_sshd

pytestmark = pytest.mark.skipif(not namespaces_work(), reason="this machine has no usable mount namespaces")
OWN = {"workspace", "root", "tmp", "run", "proc", "sys", "dev"}  # top-level folders that are not this machine's


def test_a_shell_starts_where_a_pods_does(shell: RemoteShell) -> None:
    assert out(shell, "pwd; echo $HOME; echo $RUNPOD_VOLUME_PATH").split() == ["/workspace", "/root", "/workspace"]
    assert out(shell, "ls").split() == ["README-demo.txt", "colors.sh"]
    assert out(shell, "cd ~ && pwd") == "/root\n"
    listing = out(shell, "cd / && pwd && ls").split()
    assert listing[0] == "/" and {"workspace", "root", "tmp", "usr", "etc", "proc", "dev"} <= set(listing)
    assert not any(name.startswith("podtui-sim") for name in listing)


@needs_sshd
def test_a_direct_session_has_the_pods_environment(
    full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings
) -> None:
    pod = sim_api.fetch_snapshot().find(DEMO_IDS["train"])
    assert pod is not None
    with open_remote(pod, ssh_settings, via="exec") as sh:
        assert out(sh, "echo $RUNPOD_POD_ID $RUNPOD_TCP_PORT_22 $HF_HOME $HOME").split() == [
            pod.id,
            str(full_sim.sshds[pod.id].port),
            "/workspace/hf",
            "/root",
        ]


def test_writes_to_the_pods_folders_land_in_its_sandbox_only(
    shell: RemoteShell, route: tuple[str, str], full_sim: Simulator
) -> None:
    m = machine(full_sim, route[0])
    name = f"podtui-test-{uuid.uuid4().hex[:8]}"
    out(
        shell,
        f"echo w > /workspace/{name} && echo h > ~/{name} && echo t > /tmp/{name} && "
        f"mkdir -p /workspace/deep/er && cp /workspace/{name} /workspace/deep/er/",
    )
    assert (m.workspace / name).read_text() == "w\n" and (m.workspace / "deep" / "er" / name).exists()
    assert (m.home / name).read_text() == "h\n" and (m.tmp / name).read_text() == "t\n"
    for host in ("/workspace", "/root", "/tmp"):  # this machine's folders of the same names are untouched
        assert not (Path(host) / name).exists()


def test_nothing_else_on_this_machine_can_be_changed(shell: RemoteShell, victim: Path) -> None:
    probe = f".podtui-probe-{uuid.uuid4().hex[:8]}"
    tops = sorted(set(os.listdir("/")) - OWN)
    attempts = [f"touch /{top}/{probe}" for top in tops] + [
        f"touch /{probe}",
        f"mkdir /{probe}",
        "touch /etc/podtui-x",
        "touch /usr/podtui-x",
        f"echo pwned > {victim}/data",
        f"rm -f {victim}/data",
        f"mv {victim}/data {victim}/moved",
        f"chmod 777 {victim}/data",
        f"ln -s /x {victim}/link",
        f"cp /etc/hostname {victim}/copy",
        f"mkdir {victim}/sub",
        f"truncate -s 0 {victim}/data",
        "cat /proc/sys/kernel/hostname > /proc/sys/kernel/hostname",  # the same value: harmless if it got through
        "mount -o remount,rw /",
        "mount -o remount,rw,bind /usr",
        "mount -t tmpfs none /mnt",
        "umount -l /usr",
        "unshare -m true",
    ]
    script = "; ".join(f"{{ {a}; }} 2>/dev/null && echo 'GOT THROUGH: {a}'" for a in attempts)
    try:
        result = shell.run(script + "; echo TRIED-THEM-ALL", timeout_s=60)
        assert "GOT THROUGH" not in result.output and "TRIED-THEM-ALL" in result.output, result.output
        assert out(shell, f"touch /usr/{probe} 2>&1 || echo still-read-only").strip().endswith("still-read-only")
    finally:
        for top in tops:  # if anything did get through, it does not stay
            with_probe = Path("/") / top / probe
            if with_probe.exists():
                with_probe.unlink()
    assert sorted(p.name for p in victim.iterdir()) == ["data"] and (victim / "data").read_text() == "precious\n"
    assert oct((victim / "data").stat().st_mode & 0o777) != oct(0o777)


def test_its_dev_shm_is_its_own(shell: RemoteShell) -> None:
    name = f"podtui-shm-{uuid.uuid4().hex[:8]}"
    out(shell, f"echo x > /dev/shm/{name} && ls /dev/shm/{name}")
    assert not (Path("/dev/shm") / name).exists()


def test_each_pod_has_its_own_tmp(full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings) -> None:
    pods = [sim_api.fetch_snapshot().find(DEMO_IDS[k]) for k in ("idle", "bursty")]
    names = {p.id: f"mine-{p.id}" for p in pods if p is not None}
    assert len(names) == 2
    for pod in pods:
        assert pod is not None
        with open_remote(pod, ssh_settings, via="gateway") as sh:
            out(sh, f"echo {pod.id} > /tmp/{names[pod.id]}")
    for pod in pods:
        assert pod is not None
        with open_remote(pod, ssh_settings, via="gateway") as sh:  # a new session of the same pod sees its own
            assert out(sh, "ls /tmp").split() == [names[pod.id]]
        assert (machine(full_sim, "idle" if pod.id == DEMO_IDS["idle"] else "bursty").tmp / names[pod.id]).exists()
    assert not any((Path("/tmp") / n).exists() for n in names.values())


def test_the_simulators_own_processes_start_in_the_pod(full_sim: Simulator, tmp_path: Path) -> None:
    """PodMachine.spawn_exec, and what it runs: runpodctl sending a file named by its pod path."""
    m = machine(full_sim, "idle")
    (m.workspace / "result.txt").write_text("from the pod\n")
    proc = m.spawn_exec("pwd >&2; runpodctl send /workspace/result.txt")
    assert proc.stdout is not None and proc.stderr is not None
    code = proc.stdout.readline().decode().strip()
    assert full_sim.relay.wait_for_sender(code), code
    local = install_runpodctl(tmp_path / "bin", full_sim.relay.address)
    r = subprocess.run([str(local), "receive", code], cwd=tmp_path, capture_output=True, timeout=30)
    assert r.returncode == 0 and proc.wait(10) == 0, r.stderr
    assert (tmp_path / "result.txt").read_text() == "from the pod\n"
    assert proc.stderr.readline() == b"/workspace\n"
    for s in (proc.stdout, proc.stderr, proc.stdin):
        if s is not None:
            s.close()


def test_the_pods_programs_run_inside_it(shell: RemoteShell) -> None:
    paths = out(shell, "command -v nvidia-smi runpodctl hf python3 pip df").split()
    assert all(p.startswith("/.podtui/bin/") for p in paths), paths
    assert out(shell, "nvidia-smi --query-gpu=name --format=csv,noheader").startswith("NVIDIA ")
    assert out(shell, "runpodctl version").startswith("runpodctl v")
    assert "version" in out(shell, "hf version")
    assert (
        out(shell, "python3 -c 'import torch, os; print(torch.__version__.split(\"+\")[0], os.getcwd())'").split()[1]
        == "/workspace"
    )
    assert out(shell, "df -h /workspace | tail -n 1").split()[-1] in ("/workspace", "/")
    # what they write lands in the pod too: pip installs into the image's Python
    assert "Successfully installed" in out(shell, "pip install -q 'transformers==4.57.1' 2>&1; echo")


@needs_sshd
def test_sftp_paths_are_the_pods(
    full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings, tmp_path: Path
) -> None:
    pod = sim_api.fetch_snapshot().find(DEMO_IDS["train"])
    assert pod is not None
    m = machine(full_sim, "train")
    local = tmp_path / "up.bin"
    local.write_bytes(os.urandom(100_000))
    conn = connect_pod(pod, ssh_settings, "direct")
    try:
        sftp = paramiko.SFTPClient.from_transport(conn.transport)
        assert sftp is not None
        assert sftp.normalize(".") == "/workspace"
        assert {"workspace", "root", "tmp", "usr"} <= set(sftp.listdir("/"))
        sftp.put(str(local), "/workspace/up.bin")
        sftp.put(str(local), "/tmp/up.bin")
        sftp.put(str(local), "relative.bin")
        sftp.mkdir("/root/made")
        assert sftp.open("/workspace/README-demo.txt").read().startswith(b"This is a simulated RunPod pod")
        for outside in ("/etc/podtui-x", "/usr/podtui-x", "/podtui-x", "/var/podtui-x"):
            with pytest.raises(OSError):
                sftp.put(str(local), outside)
        sftp.close()
    finally:
        conn.close()
    for got in (m.workspace / "up.bin", m.tmp / "up.bin", m.workspace / "relative.bin"):
        assert got.read_bytes() == local.read_bytes()
    assert (m.home / "made").is_dir()
    assert not Path("/workspace/up.bin").exists() and not Path("/tmp/up.bin").exists()


def test_the_gateways_prompt_shows_the_pods_paths(full_sim: Simulator, user_key: KeyFile) -> None:
    pod = full_sim.world.pods[DEMO_IDS["idle"]]
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    host, port = full_sim.gateway.address
    client.connect(
        host, port, username=pod.pod_host_id, key_filename=str(user_key.path), allow_agent=False, look_for_keys=False
    )
    try:
        chan = client.invoke_shell()
        chan.settimeout(15)

        def until(text: str) -> str:
            seen = b""
            while text.encode() not in seen:
                seen += chan.recv(65536)
            return seen.decode(errors="replace")

        first = until(f"root@{pod.id}:/workspace# ")
        assert "Enjoy your Pod" in first and NOT_ISOLATED not in first
        chan.send(b"cd /tmp\r")
        until(f"root@{pod.id}:/tmp# ")
        chan.send(b"cd /\r")
        until(f"root@{pod.id}:/# ")
    finally:
        client.close()


def test_its_pods_carry_no_folder_of_this_machine(sim_api: V2Api) -> None:
    """Only a pod that is not isolated tells podtui its folder here (so that transfers keep to it)."""
    assert all(SANDBOX_ENV not in dict(p.env) for p in sim_api.fetch_snapshot().pods)


@pytest.mark.parametrize("pod", ["llama-lora-3090", "eval-a100"])
def test_demo_exec_lists_the_pods_files(pod: str, tmp_path: Path) -> None:
    """As the user types it: `podtui --demo exec POD -- sh -c 'cd /workspace && ls'`."""
    temp = tmp_path / "temp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp)}
    r = subprocess.run(
        [sys.executable, "-m", "podtui", "--demo", "exec", pod, "--", "sh", "-c", "cd /workspace && ls"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["README-demo.txt", "colors.sh"]
    assert list(temp.iterdir()) == []  # and the demo took its folder with it


def test_a_link_in_tmpdir_leaves_this_machine_read_only(tmp_path: Path, victim: Path) -> None:
    """TMPDIR through a symbolic link: the kernel lists mounts by their resolved paths, and every one of them must
    still end up read-only."""
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    env = {**os.environ, "TMPDIR": str(tmp_path / "link")}
    probe = Path("/etc") / f"podtui-{uuid.uuid4().hex[:8]}"
    try:
        for pod in ("llama-lora-3090", "eval-a100"):  # direct SSH, the gateway
            r = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "podtui",
                    "--demo",
                    "exec",
                    pod,
                    "--",
                    f"touch {victim}/x && echo WROTE; touch {probe} && echo WROTE; touch /workspace/mine && echo MINE",
                ],
                capture_output=True,
                text=True,
                timeout=60,
                env=env,
            )
            assert "WROTE" not in r.stdout and "MINE" in r.stdout, (r.stdout, r.stderr)
    finally:
        wrote = probe.exists()
        probe.unlink(missing_ok=True)  # if it got through, it does not stay
    assert sorted(p.name for p in victim.iterdir()) == ["data"] and not wrote
    assert list(real.iterdir()) == []


VERIFY = """
import os, sys
sys.path.insert(0, sys.argv[1])
import pod_rootfs
seen = pod_rootfs.mounts
pod_rootfs.mounts = lambda: [m for m in seen() if not m[0].endswith("/etc")]  # as if a mount were missed
pod_rootfs.build({"rootfs": sys.argv[2]}, root=True)
print("BUILT")
"""


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root and unshare")
def test_a_mount_left_writable_is_refused(tmp_path: Path) -> None:
    """Fail closed: whatever the build missed, the pod's root is checked after the pivot."""
    rootfs = tmp_path / "rootfs"
    rootfs.mkdir()
    r = subprocess.run(
        [
            "unshare",
            "--mount",
            "--pid",
            "--fork",
            sys.executable,
            "-S",
            "-I",
            "-c",
            VERIFY,
            str(ENTER.parent),
            str(rootfs),
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode != 0 and "BUILT" not in r.stdout, (r.stdout, r.stderr)
    assert "/etc would be writable in the pod" in r.stderr


def test_the_simulator_never_writes_through_the_pods_links(
    clock: SimClock, tmp_path: Path, user_key: KeyFile, victim: Path
) -> None:
    """A pod's folders are the pod's: a link it leaves where the simulator writes on a pod's first start (its
    .bashrc, the demo's files) is never followed, when a simulator starts on the same folder again."""

    def simulator() -> Simulator:
        world = demo_world(clock, boot_s=30.0)
        world.pub_key = user_key.public_line + " tester"
        return Simulator(world, root=tmp_path / "sim").start()

    sim = simulator()
    try:
        settings = SshSettings(
            known_hosts=tmp_path / "known_hosts",
            gateway=sim.gateway.address,
            key_path=user_key.path,
            use_agent=False,
            connect_timeout_s=5.0,
        )
        api = V2Api(sim.api.api_key, sim.api.url, timeout_s=5.0)
        pod = api.fetch_snapshot().find(DEMO_IDS["idle"])
        assert pod is not None
        with open_remote(pod, settings, via="gateway") as sh:
            out(
                sh,
                f"ln -sf {victim}/bashrc ~/.bashrc && rm /workspace/README-demo.txt && "
                f"ln -s {victim}/readme /workspace/README-demo.txt",
            )
    finally:
        sim.stop()
    again = simulator()
    try:
        machine(again, "idle")
    finally:
        again.stop()
    assert sorted(p.name for p in victim.iterdir()) == ["data"]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root, to mount")
def test_a_mount_made_here_in_a_pods_folder_reaches_its_next_session(
    full_sim: Simulator, sim_api: V2Api, ssh_settings: SshSettings
) -> None:
    """How the tests give a pod a small disk: mounted on its folder on this machine, after its container started."""
    pod = sim_api.fetch_snapshot().find(DEMO_IDS["idle"])
    assert pod is not None
    small = machine(full_sim, "idle").workspace / "small"
    small.mkdir()
    with open_remote(pod, ssh_settings, via="gateway") as sh:
        out(sh, "true")  # its container runs
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(small)], check=True)
    try:
        with open_remote(pod, ssh_settings, via="gateway") as sh:
            fstype, options = out(sh, "findmnt -n -o FSTYPE,OPTIONS /workspace/small").split()
            assert fstype == "tmpfs" and {"rw", "nosuid", "nodev", "size=1024k"} <= set(options.split(","))
            assert "No space left" in sh.run("head -c 2000000 /dev/zero > /workspace/small/big").output
    finally:
        subprocess.run(["umount", "-l", str(small)], check=True)
    with open_remote(pod, ssh_settings, via="gateway") as sh:  # and it goes when it goes here
        assert sh.run("findmnt -n /workspace/small").exit_code != 0
        out(sh, "head -c 2000000 /dev/zero > /workspace/small/big")


def test_the_simulators_own_folder_is_out_of_a_pods_sight(victim: Path) -> None:
    """With TMPDIR where a pod sees this machine's files (here /var/tmp), the demo's folder is an empty one to it:
    not its SSH key, nor other pods' folders and specs (the simulator's key), nor sshd's host keys."""
    temp = victim / "temp"
    temp.mkdir()
    script = (
        f"for f in {temp}/podtui-sim-*; do echo FOLDER; ls -A $f; cat $f/demo_key $f/pods/*/view.json "
        "$f/pods/*/sshd/ssh_host_ed25519_key; done 2>/dev/null; echo END"
    )
    r = subprocess.run(
        [sys.executable, "-m", "podtui", "--demo", "exec", "eval-a100", "--", script],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "TMPDIR": str(temp)},
    )
    assert r.returncode == 0 and r.stdout == "FOLDER\nEND\n", (r.stdout, r.stderr)
