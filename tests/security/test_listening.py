"""Nothing podtui or its demo simulator opens listens on an address another machine could reach."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path

from podtui.cli.session import DemoSimulator
from podtui.core.config import Config

LISTEN = "0A"  # the TCP state in /proc/net/tcp*


def _descendants(root: int) -> set[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, todo = {root}, [root]
    while todo:
        parent = todo.pop()
        kids = [pid for pid, ppid in parents.items() if ppid == parent and pid not in found]
        found.update(kids)
        todo.extend(kids)
    return found


def _socket_inodes(pids: set[int]) -> set[str]:
    inodes = set()
    for pid in pids:
        try:
            fds = list(Path(f"/proc/{pid}/fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    return inodes


def _address(hex_addr: str) -> str:
    raw = bytes.fromhex(hex_addr)
    if len(raw) == 4:
        return str(ipaddress.IPv4Address(raw[::-1]))
    # /proc/net/tcp6 writes the address as four little-endian 32-bit words
    return str(ipaddress.IPv6Address(b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))))


def listening(pids: set[int]) -> list[tuple[str, int]]:
    """(address, port) of every LISTEN socket owned by one of `pids`."""
    mine = _socket_inodes(pids)
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == LISTEN and inode in mine:
                host, port = local.split(":")
                found.append((_address(host), int(port, 16)))
    return found


def test_the_demo_with_everything_started_listens_on_loopback_only() -> None:
    before = set(listening(_descendants(os.getpid())))
    demo = DemoSimulator(Config())
    try:
        api = demo.api()
        demo.runpodctl()  # the local relay's runpodctl
        endpoint = demo.hub_endpoint()
        # where the pods take SSH, as the API names it: the gateway, and each pod's own sshd where it has one
        pods = api.fetch_snapshot().pods
        ssh = {e for p in pods for e in (p.ssh_proxy, p.ssh_direct) if e is not None}
        opened = set(listening(_descendants(os.getpid()))) - before
        # the API, the SSH gateway, the relay, the Hub and direct sshd (where this machine has one)
        assert len(opened) >= 4, opened
        ports = {port for _, port in opened}
        assert any(p.ssh_proxy for p in pods) and {e.port for e in ssh} <= ports, (ssh, opened)
        assert int(api.base_url.rsplit(":", 1)[1]) in ports
        assert int(endpoint.rsplit(":", 1)[1]) in ports
        # the pods' services listen on addresses of their own in 127/8 (docs/services.md): loopback all the same
        exposed = [(host, port) for host, port in opened if not ipaddress.ip_address(host).is_loopback]
        assert exposed == []
    finally:
        demo.stop()
