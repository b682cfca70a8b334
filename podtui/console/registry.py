"""Every console this podtui has open, shown or not: they are opened here, forgotten here when their tab closes,
and all ended here when podtui quits (before the demo's simulator stops, so that none tries to reconnect)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # paramiko (under the link) loads with the first console, not for the first frame
    from podtui.console.link import ConsoleLink
    from podtui.core.api import RunPodApi
    from podtui.core.pod import Pod
    from podtui.core.ssh.connect import SshSettings


class ConsoleRegistry:
    def __init__(
        self, ssh_settings: Callable[[], SshSettings], api: RunPodApi, scrollback: int, on_input: Callable[[str], None]
    ) -> None:
        """on_input: called with the pod's id, on the event loop, whenever a console sends it input."""
        self.ssh_settings = ssh_settings
        self.api = api
        self.scrollback = scrollback
        self.on_input = on_input
        self.links: list[ConsoleLink] = []
        self._pod_of: dict[ConsoleLink, str] = {}  # each link's pod id

    def open(self, pod: Pod, cols: int, rows: int) -> ConsoleLink:
        """A new console on the pod, not connected yet (its tab connects it, in a thread)."""
        from podtui.console.link import ConsoleLink, pod_connector

        link = ConsoleLink(
            pod_connector(pod, self.ssh_settings, self.api), pod.name, cols=cols, rows=rows, scrollback=self.scrollback
        )
        link.on_input = functools.partial(self.on_input, pod.id)
        self.links.append(link)
        self._pod_of[link] = pod.id
        return link

    def forget(self, link: ConsoleLink) -> None:
        """Its tab is closing: the tab ends its shell."""
        if link in self.links:
            self.links.remove(link)
        self._pod_of.pop(link, None)

    def live(self) -> list[str]:
        """The labels of the consoles whose shell is still there (or coming back)."""
        return [link.label for link in self.links if link.state != "closed"]

    def pods_with_console(self) -> frozenset[str]:
        """The ids of the pods with a console open (its shell there or coming back): marked in the list."""
        return frozenset(self._pod_of[link] for link in self.links if link.state != "closed" and link in self._pod_of)

    def close_all(self) -> None:
        """End every console's shell, on purpose: nothing reconnects after this."""
        links, self.links = self.links, []
        self._pod_of.clear()
        for link in links:
            link.close()
