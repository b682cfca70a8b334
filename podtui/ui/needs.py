"""What screens need of the app they run in.

Each screen declares it as a narrow protocol (`needs = Needs[PodListNeeds]()` in its class, the protocol beside
it) built from the pieces below, and uses nothing else of the app; the App satisfies every one of them (mypy checks
it at the end of app.py). Data the app broadcasts reaches screens through Textual signals they subscribe to.
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
    from textual.dom import DOMNode
    from textual.screen import Screen
    from textual.signal import Signal
    from textual.widget import AwaitMount

    from podtui.console.widget import TerminalView
    from podtui.transfer.queue import TransferQueue

N = TypeVar("N")
ScreenResultCallback = Callable[[Any], None] | Callable[[Any], Awaitable[None]]


@dataclass(frozen=True)
class PodData:
    """What the pod screens draw, as of one moment: the feed (the last good data, how stale, why), the pod table's
    cells, the ticker line's figures, the time, and whether this is the demo."""
    feed: PodFeed
    rows: Mapping[str, Cells] | None
    ticker: Ticker | None
    now: float
    demo: bool


class Needs(Generic[N]):
    """A screen's view of the app it runs in, typed as what the screen needs of it."""

    @overload
    def __get__(self, node: None, owner: type[DOMNode] | None = None) -> Needs[N]: ...
    @overload
    def __get__(self, node: DOMNode, owner: type[DOMNode] | None = None) -> N: ...

    def __get__(self, node: DOMNode | None, owner: type[DOMNode] | None = None) -> N | Needs[N]:
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


class Served(Protocol):
    @property
    def services(self) -> Services: ...
    @property
    def read_only(self) -> bool: ...  # nothing that changes or costs anything


class Opens(Protocol):
    def open_screen(self, screen: Screen[Any], identity: tuple[str, ...],
                    callback: ScreenResultCallback | None = None) -> AwaitMount | None: ...


class PodBroadcasts(Protocol):
    @property
    def pods_polled(self) -> Signal[PodData]: ...  # after every poll, good or bad
    @property
    def ticked(self) -> Signal[PodData]: ...  # every second: the money moves between polls
    def pod_data(self) -> PodData: ...  # as of now, for a screen that has just been mounted


class PodActions(Protocol):
    def request_action(self, verb: str, pod: Pod) -> None: ...  # stop, resume, terminate: asks first
    async def open_console(self, pod: Pod) -> TerminalView | None: ...


class Transfers(Opens, Protocol):
    def transfer_queue(self) -> TransferQueue: ...  # started on first use
    def show_transfers(self) -> None: ...
    def ask_for_transfer(self) -> None: ...
