"""Each simulated pod's own loopback address (docs/services.md#loopback-addresses-and-localhost).

Linux routes the whole of 127.0.0.0/8 to the loopback interface, so 127.77.x.y answers with no set-up: each pod's
services listen on an address of its own, and two pods exposing 8888 do not collide. Inside the pod's container,
and for its sshd, `localhost` is that address (an /etc/hosts of their own).
"""

from __future__ import annotations

import errno
import socket

PREFIX = "127.77"
PER_BLOCK = 254  # .1 to .254 in each 127.77.x block: no .0 or .255, which some programs take for special
ADDRESSES = 256 * PER_BLOCK


def address(n: int) -> str:
    """The n-th address of the range (wrapping round)."""
    n %= ADDRESSES
    return f"{PREFIX}.{n // PER_BLOCK}.{n % PER_BLOCK + 1}"


def ports_free(host: str, ports: list[int]) -> bool:
    """Whether each port can be listened on at `host` now: another simulator on this machine (a test beside
    this one, `podtui sim` beside `podtui --demo`) may hold the same address. Only a port taken counts: one
    this process may not bind (below 1024, not root) is the same on every address."""
    for port in ports:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the service binds it
            try:
                s.bind((host, port))
            except OSError as e:
                if e.errno == errno.EADDRINUSE:
                    return False
    return True


def hosts_file(host: str, hostname: str) -> str:
    """/etc/hosts for the pod's container and its sshd: `localhost` (and the pod's hostname) is the pod's own
    address, IPv4 only, so that getaddrinfo gives nothing else to try first."""
    return (
        "# podtui simulator: this pod's own loopback address (docs/services.md)\n"
        f"{host}\tlocalhost {hostname}\n"
        "::1\tip6-localhost ip6-loopback\n"
    )
