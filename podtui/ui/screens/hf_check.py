"""Hugging Face: check a repo before any pod time is spent (token, gated access, files, size, time), then start
its download on a pod, into the transfer queue. The check runs in a thread worker; widgets change only here.

The check's words are also `podtui hf check`'s, which name its flags; here they name what this screen offers
instead. In the demo, the repos its Hub holds are named before the first check."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from typing import Protocol, cast

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, DataTable, Input, Label, Select, Static

from podtui.core import secret, units
from podtui.core.config import ConfigError
from podtui.core.floors import InstallTooOld
from podtui.core.hf.repo import BadRepoId, RepoType, parse_repo
from podtui.core.hf.report import HubReport, default_dir
from podtui.core.hf.token import FoundToken
from podtui.core.pod import Pod, PodStatus
from podtui.core.visible import visible, visible_fields
from podtui.ui import colours, keymap
from podtui.ui.colours import CLASSIC, Palette
from podtui.ui.needs import Needs, Served, Transfers, subscribe
from podtui.ui.screens.dialog import Dialog, Frame
from podtui.ui.widgets.measured_table import Cell, fill_measured
from podtui.ui.worker_errors import failures_shown, in_thread

MARKS = {"pass": ("✓", "good"), "warn": ("!", "warn"), "fail": ("✗", "bold bad")}  # in colour roles
FILE_COLUMNS = (("file", "File"), ("size", "Size"), ("checksum", "Checksum"))
REPO_EXAMPLE = "meta-llama/Llama-3.2-1B"
# What the demo's Hub holds (podtui/sim/hub_seed.py, which the UI may not import; tests/hf checks they agree):
# (repo id, type, what checking it shows)
DEMO_REPOS = (
    ("podtui-sim/tiny-gpt2", "model", "public"),
    ("podtui-sim/llama-mini", "model", "gated, license accepted"),
    ("podtui-sim/gemma-mini", "model", "gated, license not accepted"),
    ("podtui-sim/tiny-corpus", "dataset", "public"),
)
# The CLI's flags in the check's words, and what this screen says instead
CLI_WORDS = (
    (re.compile(r"; for a (model|dataset) add --repo-type \w+"), r"; for a \1, pick \1 beside the repo id"),
    (re.compile(r" \(assumed; --bandwidth to change\)"), " (assumed)"),
    (re.compile(r"HF_ENDPOINT or --endpoint says"), "HF_ENDPOINT says"),
)


def screen_words(text: str) -> str:
    """A line of the check as this screen says it: the CLI's flags replaced by this screen's own choices."""
    for pattern, words in CLI_WORDS:
        text = pattern.sub(words, text)
    return text


def for_the_screen(report: HubReport) -> HubReport:
    """The report's lines in this screen's words (screen_words); the rest as it is."""
    lines = [replace(line, title=screen_words(line.title), remedy=screen_words(line.remedy)) for line in report.lines]
    return replace(report, lines=lines)


def demo_hint() -> str:
    """Before the first check in the demo: the repos its Hub holds."""
    repos = "\n".join(
        f"  {repo}  ({kind}, {what})" if kind == "model" else f"  {repo}  ({kind}, {what}: pick dataset)"
        for repo, kind, what in DEMO_REPOS
    )
    return f"The demo's Hub holds these repos; type one and press enter:\n{repos}"


def report_text(report: HubReport, palette: Palette = CLASSIC) -> Text:
    """The check's lines, each with its remedy and a clickable link."""
    text = Text()
    for line in report.lines:
        mark, style = MARKS[line.status]
        text.append(f"{mark} ", style=palette.style(style))
        text.append(line.title + "\n")
        if line.remedy:
            text.append(f"    → {line.remedy}\n", style="dim")
        if line.link:
            text.append("    ")
            text.append(line.link, style=f"underline link {line.link}")
            text.append("\n")
    return text


class HfCheckNeeds(Served, Transfers, Protocol):
    """The token and the Hub, and the transfer queue: where the download on the pod goes."""


class HfCheckScreen(Dialog[None]):
    CSS_PATH = ["dialog.tcss", "hf_check.tcss"]  # the shared frame, then its own
    BINDINGS = keymap.bindings("hf")

    def __init__(
        self,
        pods: list[Pod],
        selected: Pod | None = None,
        repo: str = "",
        endpoint: Callable[[], str] | None = None,
        token: Callable[[], FoundToken | None] | None = None,
    ) -> None:
        super().__init__()
        self.pods = [p for p in pods if p.status is PodStatus.RUNNING]
        self.selected = selected if selected in self.pods else (self.pods[0] if self.pods else None)
        self.initial_repo = repo
        # by default the app's: the check and the download on the pod use the same token and the same Hub
        self.endpoint = endpoint or (lambda: self.needs.services.hf_endpoint())
        self.token = token or (lambda: self.needs.services.hf_token())
        self.report: HubReport | None = None
        self.generation = 0  # of the latest check: a slower earlier one that lands after it is dropped
        self.auto_dir = ""  # what the local-dir box was filled with, so the next repo may replace it
        # what the lines say, drawn again in a new theme: the check's report, or a line of text and whether it is
        # an error
        self._said: HubReport | tuple[str, bool] = ("", False)

    needs = Needs[HfCheckNeeds]()
    on_worker_state_changed = failures_shown

    def compose(self) -> ComposeResult:
        example = DEMO_REPOS[0][0] if self.needs.services.demo else REPO_EXAMPLE
        with Frame(id="dialog"):  # the dialogs' frame (dialog.py): the buttons stay in view at 80x24
            yield Static("Hugging Face: check a repo, then download it on a pod", id="title")
            yield Label("Repo id (enter checks it)")
            with Horizontal(id="repo-row"):
                yield Input(self.initial_repo, placeholder=example, id="repo")
                yield Select(
                    [("model", "model"), ("dataset", "dataset")], value="model", id="repo-type", allow_blank=False
                )
            yield Static("", id="lines", markup=False)  # repo ids and Hub messages are data, not markup
            yield DataTable[Cell](cursor_type="row", zebra_stripes=True, id="files")
            yield Static("", id="summary", markup=False)
            yield Label("Download on the pod into (relative: under /workspace; ~/ is its home)", id="target-label")
            with Horizontal(id="target-row"):
                # no running pod: a blank choice (a Select that may not be blank needs at least one option)
                choices = [(Text(f"{p.name}  ({p.id})"), p.id) for p in self.pods]
                if self.selected is not None:
                    yield Select(choices, id="pod", allow_blank=False, value=self.selected.id)
                else:
                    yield Select(choices, id="pod", allow_blank=True, prompt="no running pod")
                yield Input("", placeholder="models/NAME", id="local-dir")
            with Vertical(id="foot"), Horizontal(id="buttons"):
                yield Button("Close", id="close")
                yield Button("Check", id="check")
                yield Button("Download on pod", id="download", variant="primary", disabled=True)

    def on_mount(self) -> None:
        subscribe(self, self.app.theme_changed_signal, self._recolour)
        self._show_files([])
        self._summary("")
        self.query_one("#repo", Input).focus()
        if self.initial_repo:
            self.action_check()
        elif self.needs.services.demo:
            self._say(demo_hint())

    def _say(self, said: str | HubReport, error: bool = False) -> None:
        """said: a line of progress, an error, or the check's report."""
        self._said = said if isinstance(said, HubReport) else (said, error)
        self._draw_lines()

    def show_failure(self, line: str) -> None:
        self._say(f"the check failed: {line}", error=True)

    def _draw_lines(self) -> None:
        palette, said = colours.palette(self.app), self._said
        if isinstance(said, HubReport):
            text: str | Text = report_text(said, palette)
            text.rstrip()  # its last line's end: no blank row under it
        else:
            text = Text(f"✗ {said[0]}", style=palette.style("bold bad")) if said[1] else said[0]
        self.query_one("#lines", Static).update(text)

    def _recolour(self, _theme: object) -> None:
        self._draw_lines()

    def _say_error(self, generation: int, text: str) -> None:
        self._say_for(generation, visible(text), error=True)

    # --- checking ----------------------------------------------------------------------------------------

    def action_check(self) -> None:
        repo = self.query_one("#repo", Input).value.strip()
        repo_type = cast(RepoType, self.query_one("#repo-type", Select).value)
        self.report = None
        self.query_one("#download", Button).disabled = True
        self._show_files([])
        self._summary("")
        self._say(f"checking {repo or '…'} on the Hub…")
        self.generation += 1
        self._check(repo, repo_type, self.generation)

    @in_thread(group="hf-check", description="the Hugging Face check", exclusive=True)
    def _check(self, repo: str, repo_type: RepoType, generation: int) -> None:
        from podtui.core.hf.check import check_repo

        try:
            report = check_repo(repo, self.token(), self.endpoint(), repo_type)
        except BadRepoId as e:
            self.app.call_from_thread(self._say_error, generation, str(e))
            return
        except (ConfigError, InstallTooOld) as e:  # the token file, or this install: for the user to fix
            self.app.call_from_thread(
                self._say_error, generation, f"the check failed: {type(e).__name__}: {secret.redact(str(e))}"
            )
            return
        self.app.call_from_thread(self._show, report, generation)

    def _say_for(self, generation: int, text: str, error: bool = False) -> None:
        if generation == self.generation:  # not an answer about an input since replaced
            self._say(text, error)

    def _show(self, report: HubReport, generation: int | None = None) -> None:
        if generation is not None and generation != self.generation:
            return  # a slower earlier check: the screen shows (and downloads) only the latest one
        self.report = report  # as the Hub sent it: what a download asks for
        report = for_the_screen(visible_fields(report))  # what is shown: the Hub's words and names, never acted on
        if report.repo_type != self.query_one("#repo-type", Select).value:  # a pasted dataset URL says so itself
            self.query_one("#repo-type", Select).value = report.repo_type
        self._say(report)
        rows: list[tuple[str, tuple[Cell, ...]]] = []
        for i, f in enumerate(report.files):  # keyed by place: two names may read the same once made visible
            algorithm, digest = f.expected or ("", "")
            # every cell is data from the Hub, never markup: a digest of "[/x]" must not be parsed
            cells = (Text(f.path), units.size(f.size), Text(f"{algorithm} {digest[:10]}" if digest else "—"))
            rows.append((str(i), cells))
        self._show_files(rows)
        if report.files:
            eta = report.eta_s
            took = "under a second" if eta is not None and eta < 1 else f"about {units.duration(eta)}"
            self._summary(
                f"{len(report.files)} files, {units.size(report.total_bytes)} in all: {took} at "
                f"{units.size(report.bandwidth_bytes_per_s)}/s (assumed)"
            )
        box = self.query_one("#local-dir", Input)
        if not box.value.strip() or box.value == self.auto_dir:  # the user's own folder stays; ours follows the repo
            self.auto_dir = default_dir(report)
            box.value = self.auto_dir
        self.query_one("#download", Button).disabled = not report.ok or not self.pods

    # --- starting the download ------------------------------------------------------------------------

    def action_download(self) -> None:
        from podtui.transfer.hf_download import job_for  # the transfer code: loaded once a download starts

        report = self.report
        if report is None or not report.ok:
            self.notify(
                "check the repo first: the download starts only after a check without failures",
                severity="warning",
                markup=False,
            )
            return
        if not self._still_shown(report):
            self.notify("the repo changed since the check: check it first (enter)", severity="warning", markup=False)
            return
        if self.needs.read_only:
            self.notify("read-only mode: downloads onto pods are switched off", severity="warning", markup=False)
            return
        pod = next((p for p in self.pods if p.id == self.query_one("#pod", Select).value), None)
        if pod is None:
            self.notify("no running pod to download on", severity="warning", markup=False)
            return
        job = job_for(report, pod, self.query_one("#local-dir", Input).value.strip())
        self.needs.transfers.add(job)  # selected in the transfer tables
        self.dismiss(None)
        self.needs.transfers.show()

    def _summary(self, text: str) -> None:
        summary = self.query_one("#summary", Static)
        summary.update(text)
        summary.display = bool(text)  # no blank row where there is nothing to sum up

    def _show_files(self, rows: list[tuple[str, tuple[Cell, ...]]]) -> None:
        """The repo's files; the table is hidden while there are none, so the lines above have its room."""
        table = self.query_one("#files", DataTable)
        fill_measured(table, FILE_COLUMNS, rows)
        table.display = bool(rows)

    def _still_shown(self, report: HubReport) -> bool:
        """The repo box still names the checked repo."""
        try:
            return parse_repo(self.query_one("#repo", Input).value)[0] == report.repo_id
        except BadRepoId:
            return False

    # --- events -------------------------------------------------------------------------------------------

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "repo":
            self.action_check()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        {"check": self.action_check, "download": self.action_download}.get(str(event.button.id), self.action_close)()

    def action_close(self) -> None:
        self.dismiss(None)
