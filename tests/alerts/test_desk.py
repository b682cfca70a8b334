"""The app's desk without the app: which places it reaches (told where $TMUX and notify-send are, never the test
machine's), the runway's start set by the first poll that knows the balance, and an end that never waits on the
event loop for a receiver that hangs."""

from __future__ import annotations

from typing import Any

from podtui.core.alert_rules import parse_alert_rules
from podtui.core.alerts import Alert
from podtui.core.config import Config
from podtui.core.notify.desktop import NotifySend
from podtui.core.notify.terminal import TerminalNotifier
from podtui.core.pod import Account, Pod, PodStatus, Runtime, Snapshot
from podtui.core.services import Services
from podtui.ui.alert_desk import AlertDesk
from tests.alerts.conftest import Receiver

T0 = 1_800_000_000.0


class Host:
    """What the desk needs of the app: toasts, the bell, the terminal."""

    def __init__(self) -> None:
        self.toasts: list[str] = []
        self.bells = 0
        self.written: list[str] = []
        self._driver = self

    def notify(self, message: str, **kw: Any) -> None:
        self.toasts.append(message)

    def bell(self) -> None:
        self.bells += 1

    def write(self, data: str) -> None:
        self.written.append(data)


def desk(config: Config | None = None, **kw: Any) -> tuple[AlertDesk, Host]:
    host = Host()
    services = Services(None, config=config or Config(), clock=lambda: T0, demo=False)  # type: ignore[arg-type]
    return AlertDesk(host, services, **kw), host  # type: ignore[arg-type]


def test_the_places_are_where_the_desk_is_told() -> None:
    d, host = desk(environ={"TMUX": "/tmp/tmux-1/default,1,0"}, which=lambda name: f"/usr/bin/{name}")
    assert isinstance(d.router.sinks["notify-send"], NotifySend)
    terminal = d.router.sinks["desktop"]
    assert isinstance(terminal, TerminalNotifier) and terminal.in_tmux
    terminal(Alert("idle", "trainer is idle", "warning", T0, "o", "q"))
    assert host.written[0].startswith("\x1bPtmux;")
    d, _ = desk(environ={}, which=lambda name: None)
    assert "notify-send" not in d.router.sinks  # not installed: no place
    terminal = d.router.sinks["desktop"]
    assert isinstance(terminal, TerminalNotifier) and not terminal.in_tmux


def running(cost: float = 10.0) -> Pod:
    return Pod("p1", "trainer", PodStatus.RUNNING, runtime=Runtime(uptime_s=60), cost_per_hr=cost)


def test_a_runway_low_when_the_balance_first_comes_is_where_things_stand() -> None:
    d, host = desk(Config(runway_warn_h=24.0, runway_critical_h=4.0), environ={}, which=lambda name: None)
    d.after_poll(Snapshot(Account(balance=None), (running(),), T0), [], [])  # the first poll: no balance
    d.after_poll(Snapshot(Account(balance=None), (running(),), T0), [], [])
    d.after_poll(Snapshot(Account(balance=20.0), (running(),), T0), [], [])  # 2 h left: stood so at start
    assert host.bells == 0
    d.after_poll(Snapshot(Account(balance=500.0), (running(),), T0), [], [])  # topped up
    d.after_poll(Snapshot(Account(balance=20.0), (running(),), T0), [], [])  # and low again: news
    assert host.bells == 1


def test_the_end_never_waits_for_a_receiver_that_hangs(receiver: Receiver) -> None:
    receiver.plan = ["hang"]
    rules = parse_alert_rules({"webhook": receiver.url})
    d, _ = desk(Config(alerts=rules), environ={}, which=lambda name: None)
    webhook = d.webhook
    assert webhook is not None
    d.flush_s = 30.0  # long enough for the receiver to be let go only once close() has returned
    idle = Alert("idle", "trainer is idle", "warning", T0, "o", "q", "p1", "trainer")
    d.router.route(idle)
    receiver.wait_for(1)  # the receiver holds the POST
    d.close()  # on the event loop in the app: returns while the receiver still holds it
    assert webhook.waiting == 1
    receiver.let_go.set()  # then it answers: the alert still goes, from the desk's closing thread
    assert d.closing is not None
    d.closing.join(30)
    assert webhook.delivered == [idle.id]
