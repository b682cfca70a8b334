"""Opening podtui's screens: each once (a kind, and the pod it is about, is its identity), each loaded on first use
rather than for the first frame, and the consoles' screen installed once and kept with its tabs
(docs/architecture.md#opening-a-screen-once)."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, cast

from textual.screen import Screen

from podtui.core.pod import Pod, PodStatus
from podtui.ui.needs import Notifies, ScreenResultCallback, Served
from podtui.ui.screens.pod_list import PodListScreen

if TYPE_CHECKING:
    from textual.await_complete import AwaitComplete
    from textual.geometry import Size
    from textual.widget import AwaitMount

    from podtui.console.registry import ConsoleRegistry
    from podtui.console.widget import TerminalView
    from podtui.core.pod_links import Copyable
    from podtui.core.pod_spec import PodSpec
    from podtui.ui.screens.console import ConsoleScreen


class NavigatorHost(Served, Notifies, Protocol):
    """What the navigator needs of the app: its screens, and what the screens it opens are made with."""

    @property
    def screen(self) -> Screen[Any]: ...
    @property
    def screen_stack(self) -> list[Screen[Any]]: ...
    @property
    def size(self) -> Size: ...
    @property
    def consoles(self) -> ConsoleRegistry: ...
    def pods(self) -> tuple[Pod, ...]: ...
    def push_screen(self, screen: Screen[Any], callback: ScreenResultCallback | None = None) -> AwaitMount: ...
    def pop_screen(self) -> AwaitComplete: ...
    def is_screen_installed(self, screen: Screen[Any] | str) -> bool: ...
    def install_screen(self, screen: Screen[Any], name: str) -> None: ...
    def get_screen(self, screen: str) -> Screen[Any]: ...
    def call_later(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> bool: ...


class Navigator:
    def __init__(self, host: NavigatorHost) -> None:
        self.host = host
        self._identities: weakref.WeakKeyDictionary[Screen[Any], tuple[str, ...]] = weakref.WeakKeyDictionary()

    def open_screen(
        self, screen: Screen[Any], identity: tuple[str, ...], callback: ScreenResultCallback | None = None
    ) -> AwaitMount | None:
        """Push `screen` unless one with the same identity is already open: a key pressed twice, two Enters in one
        read or a double click must not open two. Returns what to await for the screen to be mounted, None when
        nothing was pushed."""
        if self.is_open(identity):
            return None
        self._identities[screen] = identity
        return self.host.push_screen(screen, callback)

    def is_open(self, identity: tuple[str, ...]) -> bool:
        return any(self._identities.get(s) == identity for s in self.host.screen_stack)

    def is_under(self, screen: Screen[Any], identity: tuple[str, ...]) -> bool:
        """Whether the screen right under `screen` is the one of that identity (back to it, rather than a second)."""
        stack = self.host.screen_stack
        at = next((i for i, s in enumerate(stack) if s is screen), 0)
        return at > 0 and self._identities.get(stack[at - 1]) == identity

    def selected_pod(self) -> Pod | None:
        """The pod the user is on: the details screen's, else the one selected in the list."""
        # loaded with the first details screen, not for the first frame
        from podtui.ui.screens.pod_detail import PodDetailScreen

        for screen in reversed(self.host.screen_stack):
            if isinstance(screen, PodListScreen | PodDetailScreen) and screen.selected_pod is not None:
                return screen.selected_pod
        return None

    def run_on_list(self, action: str) -> None:
        """An action of the pod list (filter, sort), from wherever the user is: back to the list first."""
        host = self.host
        while len(host.screen_stack) > 1 and not isinstance(host.screen, PodListScreen):
            host.pop_screen()
        host.call_later(host.screen.run_action, action)

    # --- pods ------------------------------------------------------------------------------------------

    def open_details(self, pod_id: str) -> None:
        if self.is_open(("details", pod_id)):
            return  # already open (two Enters in one read)
        from podtui.ui.screens.pod_detail import PodDetailScreen

        if isinstance(self.host.screen, PodDetailScreen):
            self.host.pop_screen()
        self.open_screen(PodDetailScreen(pod_id), ("details", pod_id))

    def open_copy(self, pod: Pod) -> None:
        from podtui.ui.screens.copy import CopyScreen

        def copied(chosen: Copyable | None) -> None:
            if chosen is not None:  # the text too: a terminal may refuse OSC 52, and it can be selected here
                self.host.notify(f"copied {chosen.what}:\n{chosen.text}", timeout=12, markup=False)

        self.open_screen(CopyScreen(pod, self.host.services.proxy_url()), ("copy", pod.id), copied)

    def open_logs(self, pod: Pod) -> None:
        from podtui.ui.screens.logs import LogsScreen

        self.open_screen(LogsScreen(pod), ("logs", pod.id))

    def open_services(self, pod: Pod) -> None:
        from podtui.ui.screens.services import ServicesScreen

        self.open_screen(ServicesScreen(pod), ("services", pod.id))

    def open_doctor(self, pod: Pod) -> None:
        from podtui.ui.screens.doctor import DoctorScreen

        self.open_screen(DoctorScreen(pod), ("doctor", pod.id))

    def open_edit(self, pod: Pod) -> None:
        """The pod's edit form; read-only mode refuses it."""
        from podtui.ui.screens.edit_pod import EditPodScreen

        if self.host.read_only:
            self.host.notify("read-only mode: editing a pod is switched off", severity="warning", markup=False)
            return
        self.open_screen(EditPodScreen(pod), ("edit", pod.id))

    # --- consoles -------------------------------------------------------------------------------------

    def console_screen(self) -> ConsoleScreen:
        from podtui.ui.screens.console import ConsoleScreen

        host = self.host
        if not host.is_screen_installed("consoles"):
            host.install_screen(ConsoleScreen(host.consoles, host.services.clock), "consoles")
        return cast("ConsoleScreen", host.get_screen("consoles"))

    def consoles_started(self) -> bool:
        """Whether the consoles' screen exists (a console was opened once): asking for it would make it."""
        return self.host.is_screen_installed("consoles")

    async def open_console(self, pod: Pod) -> TerminalView | None:
        host = self.host
        if pod.status is not PodStatus.RUNNING:
            host.notify(
                f"{pod.name} is {pod.status.value.lower()}: a console needs a running pod",
                severity="warning",
                markup=False,
            )
            return None
        on_top = host.screen
        if isinstance(on_top, PodListScreen) and on_top.panes_on:  # in the pod's pane (docs/architecture.md#panes)
            return await on_top.open_console_here(
                pod, lambda: host.consoles.open(pod, cols=max(host.size.width, 20), rows=max(host.size.height - 4, 5))
            )
        screen = self.console_screen()
        if (pushed := self.open_screen(screen, ("consoles",))) is not None:
            await pushed
        link = host.consoles.open(pod, cols=max(host.size.width, 20), rows=max(host.size.height - 4, 5))
        return await screen.add(link)

    def show_consoles(self) -> None:
        self.open_screen(self.console_screen(), ("consoles",))

    # --- the other screens ------------------------------------------------------------------------------

    def open_welcome(self) -> None:
        from podtui.core.profiles import key_file
        from podtui.ui.screens.welcome import WelcomeScreen

        services = self.host.services
        if services.save_key is None:  # the demo, or a profile whose key comes from elsewhere: said where
            self.host.notify(services.key_help, markup=False)
            return
        # a profile's key goes to its own key file; without one, to the config file (the screen says so)
        stored_in = key_file(services.paths, services.profile) if services.profile is not None else None
        screen = WelcomeScreen(
            services.save_key, services.config.api_timeout_s, profile=services.profile, stored_in=stored_in
        )
        self.open_screen(screen, ("welcome",))

    def open_hf_check(self) -> None:
        from podtui.ui.screens.hf_check import HfCheckScreen

        self.open_screen(HfCheckScreen(list(self.host.pods()), self.selected_pod()), ("hf",))

    def open_gpus(self) -> None:
        from podtui.ui.screens.gpus import GpusScreen

        self.open_screen(GpusScreen(), ("gpus",))

    def open_create_pod(self, prefill: PodSpec | None = None) -> None:
        """The create form, empty or filled from a spec (recreate a pod; create on a volume or from a template)."""
        from podtui.ui.screens.create_pod import CreatePodScreen

        if self.host.read_only:
            self.host.notify("read-only mode: creating a pod is switched off", severity="warning", markup=False)
            return
        self.open_screen(CreatePodScreen(prefill=prefill), ("create",))

    def open_help(self) -> None:
        from podtui.ui.screens.help import HelpScreen

        self.open_screen(HelpScreen(), ("help",))

    def open_ssh_key(self) -> None:
        from podtui.ui.screens.keys import KeysScreen

        host = self.host
        s = host.services
        self.open_screen(KeysScreen(s.api, s.key_path, host.pods, read_only=host.read_only), ("keys",))

    # --- storage and launch ---

    def open_volumes(self) -> None:
        from podtui.ui.screens.volumes import VolumesScreen

        self.open_screen(VolumesScreen(), ("volumes",))

    def open_spend(self) -> None:
        """The Spend view (docs/spend.md#the-spend-view)."""
        from podtui.ui.screens.spend import SpendScreen

        self.open_screen(SpendScreen(), ("spend",))

    def open_templates(self) -> None:
        from podtui.ui.screens.templates import TemplatesScreen

        selected = self.selected_pod()
        self.open_screen(TemplatesScreen(selected.id if selected else None), ("templates",))

    def open_recreate(self) -> None:
        from podtui.ui.screens.recreate import RecreateScreen

        self.open_screen(RecreateScreen(), ("recreate",))
