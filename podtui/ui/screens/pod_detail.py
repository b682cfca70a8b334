"""Everything about one pod: how to reach it, what it runs, what it costs."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from podtui.core import units
from podtui.core.feed import PodFeed
from podtui.core.pod import Pod, redact_env
from podtui.ui.pod_view import status_text, util_text
from podtui.ui.widgets.account_bar import AccountBar

if TYPE_CHECKING:
    from podtui.ui.app import PodtuiApp


def _grid() -> Table:
    t = Table.grid(padding=(0, 2))
    t.add_column(style="grey62", no_wrap=True, min_width=18)
    t.add_column()
    return t


def _section(title: str, body: Table | Text) -> Group:
    return Group(Text(title, style="bold underline"), body, Text(""))


def detail_renderable(pod: Pod) -> Group:
    head = Text.assemble((pod.name, "bold"), "  ", (pod.id, "grey58"), "  ", status_text(pod))
    overview = _grid()
    overview.add_row("GPU", pod.gpu_label)
    overview.add_row("Price", units.rate(pod.cost_per_hr))
    overview.add_row("Uptime", units.duration(pod.uptime_s))
    overview.add_row("Cost this run", units.money(pod.accrued_cost))
    overview.add_row("Location", pod.location or "—")
    overview.add_row("Last change", pod.last_status_change or "—")

    ssh = _grid()
    ssh.add_row("Proxy (PTY only)", Text(pod.proxy_ssh_command or "— (pod has no host yet)", style="bold"))
    ssh.add_row("Direct (exec, sftp)", Text(pod.direct_ssh_command or "— (22/tcp not on a public IP)",
                                            style="bold" if pod.direct_ssh else "grey58"))

    live = _grid()
    rt = pod.live_runtime
    if rt is None:
        why = "starting: no runtime yet" if pod.is_starting else "not running"
        live.add_row("Runtime", Text(why, style="grey58"))
    else:
        for i, g in enumerate(rt.gpus):
            live.add_row(f"GPU {i} util", util_text(g.util_percent))
            live.add_row(f"GPU {i} memory", util_text(g.memory_util_percent))
        live.add_row("Container CPU", units.percent(rt.cpu_percent))
        live.add_row("Container memory", units.percent(rt.memory_percent))
        ports = ", ".join(
            f"{p.private_port}/{p.type or '?'} → {p.ip}:{p.public_port}{'' if p.is_ip_public else ' (private)'}"
            for p in rt.ports
        )
        live.add_row("Ports", ports or "—")

    machine = _grid()
    machine.add_row("Image", pod.image or "—")
    machine.add_row("Exposed ports", pod.ports_spec or "—")
    machine.add_row("vCPU / memory", f"{pod.vcpu_count or 0:g} vCPU · {pod.memory_gb or 0:g} GB")
    machine.add_row("Container disk", f"{pod.container_disk_gb or 0:g} GB")
    volume = f"{pod.volume_gb or 0:g} GB at {pod.volume_mount_path or '—'}"
    if pod.network_volume:
        volume += f" (network volume {pod.network_volume})"
    machine.add_row("Volume", volume)

    env = _grid()
    for k, v in redact_env(pod.env) or (("—", ""),):
        env.add_row(k, Text(v))

    return Group(head, Text(""), _section("Overview", overview), _section("SSH", ssh),
                 _section("Live", live), _section("Machine", machine), _section("Environment (redacted)", env))


class PodDetailScreen(Screen[None]):
    DEFAULT_CSS = """
    PodDetailScreen VerticalScroll { padding: 1 2; }
    """
    BINDINGS = [
        Binding("escape,backspace,h", "back", "Back"),
        Binding("s", "pod('stop')", "Stop"),
        Binding("r", "pod('resume')", "Resume"),
        Binding("T", "pod('terminate')", "Terminate"),
    ]

    def __init__(self, pod_id: str) -> None:
        super().__init__()
        self.pod_id = pod_id
        self.pod: Pod | None = None

    @property
    def podtui(self) -> PodtuiApp:
        return cast("PodtuiApp", self.app)

    def compose(self) -> ComposeResult:
        yield AccountBar()
        with VerticalScroll():
            yield Static(id="detail")
        yield Footer()

    def on_mount(self) -> None:
        self.show_feed(self.podtui.feed)

    def show_feed(self, feed: PodFeed) -> None:
        self.query_one(AccountBar).show(feed, self.podtui.now(), self.podtui.demo)
        if feed.snapshot is None:
            return
        self.pod = next((p for p in feed.snapshot.pods if p.id == self.pod_id), None)
        body = self.query_one("#detail", Static)
        if self.pod is None:
            body.update(Text(f"Pod {self.pod_id} is gone (terminated). Press escape to go back.", style="bold"))
        else:
            body.update(detail_renderable(self.pod))

    def tick(self) -> None:
        self.query_one(AccountBar).show(self.podtui.feed, self.podtui.now(), self.podtui.demo)

    @property
    def selected_pod(self) -> Pod | None:
        return self.pod

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_pod(self, verb: str) -> None:
        if self.pod is not None:
            self.podtui.request_action(verb, self.pod)
