"""What screens need of the app they run in.

Each screen declares it as a narrow protocol (`needs = Needs[PodListNeeds]()` in its class, the protocol beside
it) built from the pieces below, and uses nothing else of the app; the App satisfies every one of them (mypy checks
it at the end of app.py). What the app holds (the pod actions, the navigator, the transfer desk) a screen reaches
through the app, as the narrow protocols below say. Data the app broadcasts reaches screens through Textual
signals they subscribe to.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, cast, overload

from podtui.core.feed import PodFeed
from podtui.core.pod import Pod
from podtui.core.services import Services
from podtui.core.ticker import Ticker
from podtui.ui.pod_view import Cells

if TYPE_CHECKING:
    from textual.app import App
    from textual.dom import DOMNode
    from textual.notifications import SeverityLevel
    from textual.screen import Screen
    from textual.signal import Signal
    from textual.widget import AwaitMount
    from textual.worker import Worker

    from podtui.console.widget import TerminalView
    from podtui.core.pod_spec import PodSpec
    from podtui.transfer.job import TransferJob
    from podtui.transfer.queue import TransferQueue

N = TypeVar("N")
ScreenResultCallback = Callable[[Any], None] | Callable[[Any], Awaitable[None]]


@dataclass(frozen=True)
class PodData:
    """What the pod screens draw, as of one moment: the feed (the last good data, how stale, why), the pod table's
    cells, the ticker line's figures, the time, whether this is the demo, whether polls are paused (a question is
    open), and the pods with a console open or in-app autostop on (marked in the list)."""

    feed: PodFeed
    rows: Mapping[str, Cells] | None
    ticker: Ticker | None
    now: float
    demo: bool
    paused: bool = False
    consoles: frozenset[str] = frozenset()
    autostop: frozenset[str] = frozenset()


class InApp(Protocol):
    """A screen, a widget, or a command palette provider."""

    @property
    def app(self) -> App[Any]: ...


class Needs(Generic[N]):
    """A screen's (or the palette's) view of the app it runs in, typed as what it needs of it."""

    @overload
    def __get__(self, node: None, owner: type[object] | None = None) -> Needs[N]: ...
    @overload
    def __get__(self, node: InApp, owner: type[object] | None = None) -> N: ...

    def __get__(self, node: InApp | None, owner: type[object] | None = None) -> N | Needs[N]:
        return self if node is None else cast(N, node.app)


def subscribe(node: DOMNode, signal: Signal[N], callback: Callable[[N], object]) -> None:
    """Have `callback` called as soon as `signal` is published, while `node` is mounted. Textual's Signal logs
    what a subscriber raises and goes on, which would hide a bug behind a screen that stopped updating: here it
    ends the app like any other (docs/architecture.md#crashes)."""

    def guarded(data: N) -> None:
        try:
            callback(data)
        except Exception as error:
            node.app._handle_exception(error)

    signal.subscribe(node, guarded, immediate=True)


class RunsWorkers(Protocol):
    """The app's thread workers, and its loop reached from them: blocking I/O runs there (docs/architecture.md)."""

    def call_from_thread(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> Any: ...
    def run_worker(
        self,
        work: Callable[[], None],
        name: str | None = "",
        group: str = "default",
        description: str = "",
        exit_on_error: bool = True,
        start: bool = True,
        exclusive: bool = False,
        thread: bool = False,
    ) -> Worker[None]: ...


class Served(Protocol):
    @property
    def services(self) -> Services: ...
    @property
    def read_only(self) -> bool: ...  # nothing that changes or costs anything


class Opens(Protocol):
    def open_screen(
        self, screen: Screen[Any], identity: tuple[str, ...], callback: ScreenResultCallback | None = None
    ) -> AwaitMount | None: ...


class PodBroadcasts(Protocol):
    @property
    def pods_polled(self) -> Signal[PodData]: ...  # after every poll, good or bad
    @property
    def ticked(self) -> Signal[PodData]: ...  # every second: the money moves between polls
    def pod_data(self) -> PodData: ...  # as of now, for a screen that has just been mounted


class Notifies(Protocol):
    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None: ...


# --- what the app holds, as screens use it -------------------------------------------------------------------


class ActsOnPods(Protocol):
    """The pod actions (ui/pod_actions.py)."""

    def request(self, verb: str, pod: Pod) -> None: ...  # stop, resume, terminate: asks first
    def toggle_autostop(self, pod: Pod) -> None: ...


class OpensScreens(Protocol):
    """The navigator (ui/navigator.py): each screen opened once, loaded on first use."""

    def is_open(self, identity: tuple[str, ...]) -> bool: ...  # a screen of that kind and pod is on the stack
    def is_under(self, screen: Screen[Any], identity: tuple[str, ...]) -> bool: ...  # right under that one
    def open_details(self, pod_id: str) -> None: ...
    def open_doctor(self, pod: Pod) -> None: ...
    def open_logs(self, pod: Pod) -> None: ...  # the pod's logs, live, full screen
    def open_services(self, pod: Pod) -> None: ...  # the pod's ports, links and forwards, full screen
    def open_copy(self, pod: Pod) -> None: ...  # the pod's SSH command, id or a service URL, to the clipboard
    async def open_console(self, pod: Pod) -> TerminalView | None: ...  # a new tab on the consoles screen
    def show_consoles(self) -> None: ...
    def open_hf_check(self) -> None: ...
    def open_gpus(self) -> None: ...
    def open_create_pod(self, prefill: PodSpec | None = None) -> None: ...
    def open_ssh_key(self) -> None: ...


class RunsTransfers(Protocol):
    """The transfer desk (ui/transfers.py)."""

    def queue(self) -> TransferQueue: ...  # started on first use
    def show(self) -> None: ...  # the transfer pane
    def ask(self, then_show: bool = True) -> None: ...  # the add-transfer dialog, on the pod the user is on
    def add(self, job: TransferJob) -> TransferJob: ...  # queued from the UI: the tables select it
    def jobs(self) -> list[TransferJob]: ...  # as listed, without starting the queue
    @property
    def changed_signal(self) -> Signal[TransferJob | str]: ...  # a transfer changed, or the id of one removed
    @property
    def picked(self) -> str | None: ...  # the transfer last added from the UI


class HasPodActions(Protocol):
    @property
    def pod_actions(self) -> ActsOnPods: ...


class HasNavigator(Protocol):
    @property
    def navigator(self) -> OpensScreens: ...


class LeavesForSsh(Protocol):
    """Leaving podtui for OpenSSH or an editor (ui/ssh_out.py)."""

    def ssh(self, pod: Pod) -> None: ...  # the app suspended while OpenSSH runs in the terminal
    def editor(self, pod: Pod) -> None: ...  # VS Code or Cursor on the pod's /workspace


class HasSshOut(Protocol):
    @property
    def ssh_out(self) -> LeavesForSsh: ...


class Transfers(Opens, Protocol):
    @property
    def transfers(self) -> RunsTransfers: ...


def in_sight(screen: Screen[Any]) -> bool:
    """Whether the screen is on show: on top, or under dialogs only (a ModalScreen leaves it visible around it).
    The money moves on such a screen every second, a question open or not."""
    from textual.screen import ModalScreen

    stack = screen.app.screen_stack
    if screen not in stack:
        return False
    return all(isinstance(s, ModalScreen) for s in stack[stack.index(screen) + 1 :])
