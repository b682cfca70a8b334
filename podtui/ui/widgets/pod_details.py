"""Everything about one pod, drawn in the app theme's colours: how to reach it, what it runs, what it costs. The
details screen shows it, and so does the Details tab of the main screen's pane; once RunPod's answer no longer has
the pod it says so, never showing the old figures as if live."""

from __future__ import annotations

import ipaddress

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from podtui.core import actions, units
from podtui.core.feed import STUCK_ADVICE, STUCK_STARTING_S, PodFeed
from podtui.core.pod import Pod, redact_env
from podtui.core.pod_links import PROXY_URL, service_urls
from podtui.ui import colours, keymap
from podtui.ui.colours import CLASSIC, Palette
from podtui.ui.needs import Needs, Served
from podtui.ui.pod_view import status_text, util_text


def _plain(value: object) -> Text:
    """Values from RunPod are data, never Rich markup: `[/]` in a status text must not be parsed."""
    return value if isinstance(value, Text) else Text(str(value))


def _row(table: Table, *cells: object) -> None:
    table.add_row(*(_plain(c) for c in cells))


def _grid(palette: Palette) -> Table:
    t = Table.grid(padding=(0, 2))
    t.add_column(style=palette.style("muted"), no_wrap=True, min_width=18)
    t.add_column()
    return t


def _public(ip: str | None) -> bool:
    """v2's runtime ports carry no public flag (docs/runpod-facts.md#rest-v2): an address in a private or shared
    range (100.64/10 among them) is not reachable from outside. Loopback is the simulator's, reachable here."""
    try:
        address = ipaddress.ip_address(ip or "")
    except ValueError:
        return False
    return address.is_global or address.is_loopback


def _section(title: str, body: Table | Text) -> Group:
    return Group(Text(title, style="bold underline"), body, Text(""))


def detail_renderable(
    pod: Pod,
    starting_s: float | None = None,
    palette: Palette = CLASSIC,
    now: float | None = None,
    proxy_url: str = PROXY_URL,
    logs_key: str = "L",
) -> Group:
    """starting_s: how long the pod has been starting (PodFeed.starting_for), if it is; now: the clock, for
    "2h 18m ago" (left out without it)."""
    st = palette.style
    head = Text.assemble((pod.name, "bold"), "  ", (pod.id, st("faint")), "  ", status_text(pod, starting_s, palette))
    overview = _grid(palette)
    _row(overview, "GPU", pod.gpu_label)
    _row(overview, "Price", units.rate(pod.cost_per_hr))
    _row(overview, "Uptime", units.duration(pod.uptime_s))
    _row(overview, "Cost this run", units.money(pod.accrued_cost))
    _row(overview, "Data centre", pod.location or "—")
    _row(overview, "CUDA", pod.cuda_version or "—")
    if now is not None:
        _row(overview, "Created", units.ago(pod.created_at, now))
        if pod.started_at is not None:
            _row(overview, "Last started", units.ago(pod.started_at, now))
    verbs = [verb for verb in actions.VERBS if pod.can(actions.API_ACTION[verb])]  # podtui's words, as on the keys
    _row(overview, "Can", ", ".join(verbs) or "—")
    if pod.locked:
        _row(overview, "Locked", Text("RunPod will not stop or restart it", style=st("bold warn")))

    ssh = _grid(palette)
    # `ssh.proxy` may be null (docs/runpod-facts.md#rest-v2): always before the pod runs
    no_proxy = "— (RunPod gave none)" if pod.live_runtime is not None else "— (RunPod gives none until the pod runs)"
    _row(
        ssh, "Proxy (PTY only)", Text(pod.proxy_ssh_command or no_proxy, style="bold" if pod.ssh_proxy else st("faint"))
    )
    _row(
        ssh,
        "Direct (exec, sftp)",
        Text(
            pod.direct_ssh_command or "— (needs 22/tcp published, and a running pod)",
            style="bold" if pod.direct_ssh else st("faint"),
        ),
    )

    live = _grid(palette)
    rt = pod.live_runtime
    if rt is None:
        why = "starting: no runtime yet" if pod.is_starting else "not running"
        if pod.is_starting and starting_s is not None:
            why = f"starting for {units.duration(starting_s)}: no runtime yet"
        _row(live, "Runtime", Text(why, style=st("faint")))
        if pod.is_starting and starting_s is not None and starting_s >= STUCK_STARTING_S:
            advice = STUCK_ADVICE.format(logs=logs_key)
            _row(live, "", Text(f"⚠ it may be stuck: {advice}", style=st("bold warn")))
    else:
        for i, g in enumerate(rt.gpus):
            _row(live, f"GPU {i} util", util_text(g.util_percent, palette=palette))
            _row(live, f"GPU {i} memory", util_text(g.memory_util_percent, palette=palette))
        _row(live, "Container CPU", units.percent(rt.cpu_percent))
        _row(live, "Container memory", units.percent(rt.memory_percent))
        ports = ", ".join(
            f"{p.private_port}/{p.type or '?'} → {p.ip}:{p.public_port}{'' if _public(p.ip) else ' (private)'}"
            for p in rt.ports
        )
        _row(live, "Ports", ports or "—")
        for port, url in service_urls(pod, proxy_url):
            _row(live, f"HTTP {port}", url)

    machine = _grid(palette)
    _row(machine, "Image", pod.image or "—")
    _row(machine, "Exposed ports", pod.ports_spec or "—")
    if pod.vcpu_count is not None or pod.memory_gb is not None:
        _row(machine, "vCPU / memory", f"{pod.vcpu_count or 0:g} vCPU · {pod.memory_gb or 0:g} GB")
    _row(machine, "Container disk", f"{pod.container_disk_gb or 0:g} GB")
    volume = f"{pod.volume_gb or 0:g} GB at {pod.volume_mount_path or '—'}"
    if pod.network_volume:
        volume += f" (network volume {pod.network_volume})"
    _row(machine, "Volume", volume)

    env = _grid(palette)
    for k, v in redact_env(pod.env) or (("—", ""),):
        _row(env, k, Text(v))

    return Group(
        head,
        Text(""),
        _section("Overview", overview),
        _section("SSH", ssh),
        _section("Live", live),
        _section("Machine", machine),
        _section("Environment (redacted)", env),
    )


def gone_text(
    pod_id: str, last_seen: Pod | None, feed: PodFeed, back: str = "escape", palette: Palette = CLASSIC
) -> Text:
    """What the screen says once RunPod's answer no longer holds the pod: never its old figures as if live.
    back: the key that goes back to the list."""
    name = f"{last_seen.name} ({pod_id})" if last_seen is not None else pod_id
    snap = feed.snapshot
    skipped = snap.skipped_records if snap is not None else 0
    if skipped:
        # an unreadable record is dropped from the answer: that is not proof the pod was terminated
        why = (
            f"is missing from RunPod's last answer, which had {skipped} unreadable pod record(s): "
            "it may still exist; the next poll will tell."
        )
    else:
        why = "is no longer on your account: it was terminated (here, on runpod.io or by RunPod)."
    return Text.assemble((f"{name} {why}", "bold"), (f"\nPress {back} to go back to the list.", palette.style("muted")))


class PodDetails(Static):
    """One pod's details, kept up to date by show() with each poll, and drawn again in a new theme."""

    needs = Needs[Served]()  # the proxy's address for the HTTP services

    def __init__(self, *, back_key: str = "escape", id: str | None = None) -> None:
        super().__init__(id=id)
        self.back_key = back_key  # named when the pod is gone
        self.pod_id: str | None = None
        self.pod: Pod | None = None  # None once the pod is no longer in RunPod's answer
        self._last_seen: Pod | None = None
        self._feed: PodFeed | None = None
        self._now: float | None = None

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._draw())

    def show(self, pod_id: str | None, feed: PodFeed, now: float | None = None) -> None:
        if pod_id != self.pod_id:
            self.pod_id, self._last_seen = pod_id, None
        self._feed, self._now = feed, now
        snap = feed.snapshot
        self.pod = None if snap is None else next((p for p in snap.pods if p.id == pod_id), None)
        if self.pod is not None:
            self._last_seen = self.pod
        self._draw()

    @property
    def last_seen(self) -> Pod | None:
        return self._last_seen

    def _draw(self) -> None:
        feed, palette = self._feed, colours.palette(self.app)
        if feed is None or feed.snapshot is None:
            return
        if self.pod_id is None:
            self.update(Text("no pod selected", style=palette.style("muted")))
        elif self.pod is None:
            self.update(gone_text(self.pod_id, self._last_seen, feed, self.back_key, palette))
        else:
            starting = feed.starting_for(self.pod.id, feed.snapshot.fetched_at)
            logs_key = keymap.key_for(self.app, "pods.logs")
            proxy_url = self.needs.services.proxy_url()
            self.update(detail_renderable(self.pod, starting, palette, self._now, proxy_url, logs_key))
