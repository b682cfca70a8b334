"""A pod's services (docs/services.md): every port it exposes, where each is reached from here (an HTTP port through
RunPod's proxy, a TCP port at its public ip:port), and the ports forwarded to this machine over direct SSH, with their
state and traffic (docs/forwarding.md). `o` opens a link, `y` copies it, `p` copies Jupyter's password (shown masked,
never in clear), `f` forwards the highlighted port and `x` stops that.

The services screen shows one full size and the pane's Services tab one beside the list; both are this panel."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Static

from podtui.core.pod import Pod
from podtui.core.pod_links import Service, services
from podtui.core.services import Services
from podtui.core.units import size
from podtui.core.visible import is_clean, visible
from podtui.ui import colours, keymap
from podtui.ui.needs import Needs, subscribe
from podtui.ui.worker_errors import failures_shown, in_thread

if TYPE_CHECKING:
    from textual.notifications import SeverityLevel

    from podtui.core.forward import Forward
    from podtui.ui.forwards import ForwardDesk

JUPYTER_PASSWORD = "JUPYTER_PASSWORD"  # what RunPod's startJupyter puts in the pod's env (docs/runpod-facts.md#rest-v2)
MASK = "••••••••"
PROXY_LIMITS = (
    "HTTP links go through RunPod's proxy: a request it waits on over 100 s gets a 524 (run long jobs in the "
    "background and poll), and a pod that moves to another machine gets new addresses."
)


class ServicesHost(Protocol):
    """What the panel needs: the services (the proxy's URL template, the clock) and the forward desk."""

    @property
    def services(self) -> Services: ...
    @property
    def forwards(self) -> ForwardDesk: ...


class ServicesPanel(Vertical):
    DEFAULT_CSS = """
    ServicesPanel { height: 1fr; }
    ServicesPanel DataTable { height: auto; max-height: 12; }
    ServicesPanel #forwards-table { margin-top: 1; }
    ServicesPanel #services-notes { padding: 0 1; height: auto; color: $text-muted; }
    """
    BINDINGS = keymap.bindings("services")

    on_worker_state_changed = failures_shown
    needs = Needs[ServicesHost]()

    class Left(Message):
        """Back was pressed: whoever holds the panel decides."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.pod: Pod | None = None
        self.rows: list[Service] = []
        self._busy: set[tuple[str, int]] = set()  # (pod id, port): a forward being made or stopped

    def compose(self) -> ComposeResult:
        yield DataTable(id="services-table", cursor_type="row")
        yield Static(id="services-notes", markup=False)
        yield DataTable(id="forwards-table", cursor_type="none", show_cursor=False)

    def on_mount(self) -> None:
        table = self.table
        for label, key in (("Port", "port"), ("Type", "type"), ("Reached at", "where"), ("Here", "fwd")):
            table.add_column(label, key=key)
        forwards = self.query_one("#forwards-table", DataTable)
        for label in ("Forwarded here", "Pod port", "State", "↓ in", "↑ out", "Open"):
            forwards.add_column(label)
        forwards.display = False
        subscribe(self, self.needs.forwards.changed_signal, self._forward_changed)
        self.set_interval(1.0, self._traffic)
        self._draw()

    @property
    def table(self) -> DataTable[Text | str]:
        return self.query_one("#services-table", DataTable)

    @property
    def forwards_table(self) -> DataTable[Text | str]:
        return self.query_one("#forwards-table", DataTable)

    def show_pod(self, pod: Pod | None) -> None:
        """Show this pod's services (the same pod again, as polled: redrawn where it changed)."""
        self.pod = pod
        if self.is_mounted:
            self._draw()

    def show_failure(self, line: str) -> None:
        self.notify(line, severity="error", markup=False)

    # --- drawing -----------------------------------------------------------------------------------------

    def _draw(self) -> None:
        pod = self.pod
        rows = list(services(pod, self.needs.services.proxy_url())) if pod is not None else []
        table = self.table
        row_before = table.cursor_row
        if rows != self.rows:
            self.rows = rows
            table.clear()
            for service in rows:
                table.add_row(*self._cells(service), key=str(service.port) + "/" + service.type)
            if rows:
                table.move_cursor(row=min(max(row_before, 0), len(rows) - 1))
        self._redraw_forwards()
        self._notes()

    def _cells(self, service: Service) -> tuple[Text | str, ...]:
        st = colours.palette(self.app).style
        if service.url is not None:
            where = Text(visible(service.url), st("command"))
        elif service.public is not None:
            where = Text(visible(service.public))
        elif service.type == "tcp":
            where = Text("no public address now", st("muted"))
        else:
            where = Text("—", st("muted"))
        return (str(service.port), visible(service.type), where, self._forward_cell(service.port))

    def _forwards(self) -> list[Forward]:
        return self.needs.forwards.of(self.pod.id) if self.pod is not None else []

    def _forward_cell(self, port: int, forwards: list[Forward] | None = None) -> Text:
        st = colours.palette(self.app).style
        if self.pod is not None and (self.pod.id, port) in self._busy:
            return Text("…", st("muted"))
        found = [f for f in (self._forwards() if forwards is None else forwards) if f.remote_port == port]
        live = [f for f in found if f.state != "stopped"]
        if not live:
            return Text("")
        f = live[-1]
        return Text(f":{f.local_port}", self._state_style(f))

    def _state_style(self, forward: Forward) -> Style:
        st = colours.palette(self.app).style
        return {"listening": st("good"), "failed": st("bad"), "stopped": st("muted")}.get(forward.state, st("warn"))

    def _redraw_forwards(self) -> None:
        """The Here column (the local port, coloured by its state) and the table of forwards under the notes:
        where each listens, its state in words, its traffic and its open connections."""
        forwards = self._forwards()
        table = self.table
        for service in self.rows:
            key = str(service.port) + "/" + service.type
            table.update_cell(key, "fwd", self._forward_cell(service.port, forwards), update_width=True)
        shown = self.forwards_table
        shown.display = bool(forwards)
        shown.clear()
        for f in forwards:
            shown.add_row(
                f.local_address,
                str(f.remote_port),
                Text(visible(f.describe()), self._state_style(f)),
                size(f.bytes_in),
                size(f.bytes_out),
                str(f.connections),
            )

    def _traffic(self) -> None:
        """Every second, while forwards are listed: their traffic moves between their state changes."""
        if self.forwards_table.display or self._forwards():
            self._redraw_forwards()

    def _forward_changed(self, forward: Forward) -> None:
        if self.pod is not None and forward.pod_id == self.pod.id:
            self._redraw_forwards()
            self._notes()

    def _notes(self) -> None:
        pod = self.pod
        st = colours.palette(self.app).style
        notes = Text()
        if pod is None:
            notes.append("no pod selected")
        elif not self.rows:
            notes.append(f"{visible(pod.name)} exposes no ports.")
        else:
            if dict(pod.env).get(JUPYTER_PASSWORD):
                notes.append(f"Jupyter's password: {MASK}  ")
                notes.append(keymap.fill(self.app, "({services.password} copies it)\n"))
            if any(s.url for s in self.rows):
                notes.append(PROXY_LIMITS + "\n")
            if pod.state != "RUNNING":
                notes.append(f"Its ports are reached once it runs (it is {visible(pod.state)}).\n", st("muted"))
            elif pod.ssh_direct is None:
                notes.append(
                    "Forwarding a port needs direct SSH (a public IP and 22/tcp exposed); this pod has only "
                    "RunPod's gateway, which carries a shell and nothing else: use the HTTP links instead.\n",
                    st("warn"),
                )
            else:
                notes.append(keymap.fill(self.app, "{services.forward} forwards the highlighted port to this machine"))
                for note in {f.note for f in self._forwards() if f.note}:
                    notes.append("\n" + visible(note), st("warn"))
        self.query_one("#services-notes", Static).update(notes)

    # --- keys ----------------------------------------------------------------------------------------------

    def _selected(self) -> Service | None:
        row = self.table.cursor_row
        return self.rows[row] if self.rows and 0 <= row < len(self.rows) else None

    def _link(self) -> tuple[Service, str] | None:
        service = self._selected()
        if service is None:
            return None
        forwards = [f for f in self._forwards() if f.remote_port == service.port and f.state == "listening"]
        if forwards and service.type == "http":  # forwarded here: the local address skips the proxy's limits
            return service, f"http://{forwards[-1].local_address}/"
        text = service.url or service.public
        if text is None:
            self.notify(f"port {service.port} has no address to reach it from here", severity="warning", markup=False)
            return None
        if not is_clean(text):  # opened or pasted, a control character in it would act
            self.notify(
                f"the address RunPod gave holds control characters: {visible(text)}", severity="error", markup=False
            )
            return None
        return service, text

    def action_open(self) -> None:
        found = self._link()
        if found is None:
            return
        service, url = found
        if service.type != "http" or not url.startswith(("http://", "https://")):
            self.notify(
                f"port {service.port} is {visible(service.type)}: {url} is for a client of its own, not a browser",
                markup=False,
            )
            return
        self.app.open_url(url)
        self.notify(f"opened {url}", timeout=5, markup=False)

    def action_copy(self) -> None:
        found = self._link()
        if found is not None:
            self.app.copy_to_clipboard(found[1])
            self.notify(f"copied {found[1]}", timeout=5, markup=False)

    def action_password(self) -> None:
        password = dict(self.pod.env).get(JUPYTER_PASSWORD) if self.pod is not None else None
        if not password:
            self.notify("this pod has no JUPYTER_PASSWORD in its environment", severity="warning", markup=False)
            return
        self.app.copy_to_clipboard(password)
        self.notify("copied Jupyter's password", timeout=5, markup=False)  # the password itself is never shown

    def action_forward(self) -> None:
        service, pod = self._selected(), self.pod
        if service is None or pod is None:
            return
        if pod.ssh_direct is None:
            from podtui.core.forward import DirectSshNeeded, check_forwardable

            try:
                check_forwardable(pod, service.port, self.needs.services.proxy_url())
            except DirectSshNeeded as e:
                self.notify(str(e), severity="warning", timeout=15, markup=False)
                return
        if any(f.remote_port == service.port and f.state not in ("stopped", "failed") for f in self._forwards()):
            self.notify(f"port {service.port} is forwarded already", timeout=5, markup=False)
            return
        if (pod.id, service.port) in self._busy:  # pressed twice: one forward is under way
            return
        self._busy.add((pod.id, service.port))
        self._redraw_forwards()
        self._forward(pod, service.port)

    @in_thread(group="forward", description="forwarding a port")
    def _forward(self, pod: Pod, port: int) -> None:
        from podtui.core.forward import ForwardError
        from podtui.core.ssh.errors import SshError

        said, severity = f"port {port} not forwarded: unexpected error (details in the log)", "error"
        try:
            made = self.needs.forwards.forward(pod, port)
            said, severity = f"forwarding {made.local_address} → {made.target}", "information"
        except (ForwardError, SshError, OSError) as e:
            said = f"port {port} not forwarded: {e}"
        finally:  # whatever happened, the port is free to try again
            self.app.call_from_thread(self._forward_done, pod.id, port, said, severity)

    def _forward_done(self, pod_id: str, port: int, text: str, severity: SeverityLevel = "information") -> None:
        self._busy.discard((pod_id, port))
        self.notify(text, severity=severity, timeout=10, markup=False)
        self._redraw_forwards()
        self._notes()

    def action_stop_forward(self) -> None:
        service, pod = self._selected(), self.pod
        if service is None or pod is None:
            return
        live = [f for f in self._forwards() if f.remote_port == service.port and f.state != "stopped"]
        if not live:
            self.notify(f"port {service.port} is not forwarded", timeout=5, markup=False)
            return
        if (pod.id, service.port) in self._busy:
            return
        self._busy.add((pod.id, service.port))
        self._stop(pod, service.port, live[-1].local_port)

    @in_thread(group="forward", description="stopping a forward")
    def _stop(self, pod: Pod, port: int, local_port: int) -> None:
        said, severity = f"port {port}: the forward did not stop cleanly (details in the log)", "error"
        try:
            self.needs.forwards.stop(pod, local_port)
            said, severity = f"stopped forwarding port {port}", "information"
        finally:
            self.app.call_from_thread(self._forward_done, pod.id, port, said, severity)

    def action_back(self) -> None:
        self.post_message(self.Left())
