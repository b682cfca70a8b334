"""Every profile's account at once: its pods running, what it burns, its balance and runway, and their sum
(docs/profiles.md#the-accounts-view).

Each profile is fetched in a thread worker of its own, with an API built from that profile's own key
(`services.profile_api`), never the app's API of the profile in use; a profile that fails (no key, a refused key,
RunPod down) says so on its row and the others still show. Enter switches to the highlighted profile."""

from __future__ import annotations

from typing import Protocol

from rich.text import Text
from textual.app import ComposeResult
from textual.coordinate import Coordinate
from textual.screen import Screen
from textual.widgets import DataTable, Static

from podtui.core import units
from podtui.core.profiles import AccountBurn, fetch_account, marked_duplicates, runway_words, total_burn
from podtui.core.visible import visible
from podtui.ui import keymap
from podtui.ui.needs import Needs, Served
from podtui.ui.widgets.fitted_footer import FittedFooter
from podtui.ui.widgets.measured_table import Cell, fill_measured
from podtui.ui.worker_errors import failures_shown, in_thread

TITLE = "Accounts: every profile's pods, burn and balance"
COLUMNS = (
    ("profile", "profile"),
    ("running", "running"),
    ("burn", "$/hr"),
    ("balance", "balance"),
    ("runway", "runway"),
    ("note", "key from"),
)
NO_PROFILES = "no profiles: add [profiles.NAME] tables to config.toml (see `podtui profiles`)"


class AccountsNeeds(Served, Protocol):
    """The profiles and their APIs (the services), and starting the app again on another profile."""

    def switch_profile(self, name: str) -> None: ...


def burn_cells(row: AccountBurn, current: bool = False) -> tuple[Cell, ...]:
    """A row of the table, every figure right-aligned; a failed profile's figures are dashes and its note says why."""
    name = visible(row.profile) + (" ●" if current else "")
    if not row.ok:
        dash = Text("—", style="dim", justify="right")
        return (Text(name), dash, dash, dash, dash, Text(visible(row.problem or "error"), style="bold red"))
    runway = runway_words(row)
    note = visible(row.source) + (" · balance unknown" if row.balance_unknown_why else "")
    if row.same_as is not None:  # counted once, on the first profile that reaches it
        note += f" · same account as {visible(row.same_as)}"
    return (
        Text(name, style="bold" if current else ""),
        Text(f"{row.running}/{row.pods}", justify="right"),
        Text(units.rate(row.burn_per_hr).removesuffix("/hr"), justify="right"),
        Text(units.money(row.balance), justify="right"),
        Text(runway, justify="right"),
        Text(note, style="dim"),
    )


def _loading(name: str, source: str, current: bool) -> tuple[Cell, ...]:
    dash = Text("…", style="dim", justify="right")
    label = visible(name) + (" ●" if current else "")
    return (Text(label), dash, dash, dash, dash, Text("loading…", style="dim italic"))


class AccountsScreen(Screen[None]):
    CSS_PATH = "accounts.tcss"
    BINDINGS = keymap.bindings("accounts")

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[str, AccountBurn | None] = {}  # profile -> its figures; None: still loading
        # each refresh's number: an answer of an earlier one, landing late, is dropped rather than drawn over a newer
        self.generation = 0

    needs = Needs[AccountsNeeds]()
    on_worker_state_changed = failures_shown

    def compose(self) -> ComposeResult:
        yield Static(TITLE, id="title")
        yield DataTable[Cell](id="accounts", cursor_type="row", zebra_stripes=True)
        yield Static("", id="totals", markup=False)
        yield Static("", id="status", markup=False)
        yield FittedFooter()

    def on_mount(self) -> None:
        self.query_one(DataTable).focus()
        self.action_refresh()

    def action_refresh(self) -> None:
        services = self.needs.services
        if services.profile_api is None or not services.profiles:
            self.rows = {}
            self._draw()
            self._status(NO_PROFILES)
            return
        self.generation += 1
        self.rows = dict.fromkeys(services.profiles)
        self._draw()
        self._status(
            keymap.fill(
                self.app,
                "enter or {accounts.switch}: switch to the highlighted profile · {accounts.refresh}: ask again",
            )
        )
        for name, source in services.profiles.items():
            self._fetch(name, source, self.generation)

    @in_thread(group="accounts", description="fetching a profile's account")
    def _fetch(self, name: str, source: str, generation: int) -> None:
        services = self.needs.services
        assert services.profile_api is not None
        row = fetch_account(name, source, services.profile_api, services.clock)
        self.app.call_from_thread(self._landed, row, generation)

    def _landed(self, row: AccountBurn, generation: int) -> None:
        if generation == self.generation and row.profile in self.rows:
            self.rows[row.profile] = row
            self._draw()

    def _draw(self) -> None:
        table = self.query_one(DataTable)
        keep = self.selected
        current = self.needs.services.profile
        sources = self.needs.services.profiles
        rows: list[tuple[str, tuple[Cell, ...]]] = []
        landed = iter(marked_duplicates(r for r in self.rows.values() if r is not None))
        for name, row in self.rows.items():
            row = next(landed) if row is not None else None
            here = name == current
            rows.append((name, _loading(name, sources.get(name, ""), here) if row is None else burn_cells(row, here)))
        fill_measured(table, COLUMNS, rows)
        names = list(self.rows)
        if keep in names:
            table.move_cursor(row=names.index(keep))
        elif current in names:
            table.move_cursor(row=names.index(current))
        self.query_one("#totals", Static).update(self._total_line())
        self._describe()

    def _total_line(self) -> str:
        landed = [r for r in self.rows.values() if r is not None]
        if not self.rows:
            return ""
        total = total_burn(landed)
        failed = sum(1 for r in landed if not r.ok)
        waiting = len(self.rows) - len(landed)
        runway = runway_words(total)
        same = sum(1 for r in marked_duplicates(landed) if r.same_as is not None)
        accounts = len(landed) - failed - same
        parts = [
            f"total of {accounts}: {total.running} running",
            units.rate(total.burn_per_hr),
            units.money(total.balance),
            "nothing runs out" if runway == "∞" else f"first runs out in {runway}",
        ]
        if failed:
            parts.append(f"{failed} not counted")
        if same:
            parts.append(f"{same} the same account as another")
        if waiting:
            parts.append(f"{waiting} loading")
        return " · ".join(parts)

    def on_data_table_row_highlighted(self, _event: DataTable.RowHighlighted) -> None:
        self._describe()

    def _describe(self) -> None:
        """The status line: the highlighted profile's whole story (why it failed, where its key comes from)."""
        name = self.selected
        row = self.rows.get(name) if name is not None else None
        if name is None:
            return
        source = self.needs.services.profiles.get(name, "")
        if row is not None and not row.ok:
            self._status(f"{name}: {row.error}", True)
            return
        said = f"{name}: key from {source}"
        if row is not None and row.ok:
            same = next((r.same_as for r in marked_duplicates(self._landed_rows()) if r.profile == name), None)
            if same is not None:
                said += f"; the same RunPod account as {same}, counted once in the total"
        if row is not None and row.balance_unknown_why:
            said += f"; balance unknown: {row.balance_unknown_why}"
        hint = keymap.fill(self.app, "enter or {accounts.switch}: switch to it · {accounts.refresh}: ask again")
        self._status(said if name == self.needs.services.profile else f"{said} · {hint}")

    def _landed_rows(self) -> list[AccountBurn]:
        return [r for r in self.rows.values() if r is not None]

    @property
    def selected(self) -> str | None:
        table = self.query_one(DataTable)
        if not self.rows or table.row_count == 0 or table.cursor_row < 0:
            return None
        value = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
        return value if isinstance(value, str) else None

    def action_switch(self) -> None:
        name = self.selected
        if name is None:
            return
        if name == self.needs.services.profile:
            self.notify(f"already on profile {name}", markup=False)
            return
        self.needs.switch_profile(name)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_switch()

    def action_back(self) -> None:
        self.dismiss()

    def show_failure(self, line: str) -> None:
        self._status(line, True)

    def _status(self, text: str, error: bool = False) -> None:
        status = self.query_one("#status", Static)
        status.update(visible(text))
        status.set_class(error, "-error")
