"""How one transfer reads in the pane: a progress bar, rate, ETA, state and checksum, as Rich text cells.

Paths, names, pod names and errors come from outside (the pod's shell, runpodctl, tar): shown through visible(),
so a name holding escape sequences or bidi overrides is seen as such and never acts on the terminal."""

from __future__ import annotations

from rich.text import Text

from podtui.core import units
from podtui.core.visible import visible
from podtui.transfer.job import TransferJob
from podtui.ui.colours import CLASSIC, Palette

BAR_WIDTH = 14
# (title, fixed width or None for "fit the content"); names and pods are cut with an ellipsis
COLUMNS: tuple[tuple[str, int | None], ...] = (
    ("File", 22),
    ("Pod", 16),
    ("", None),
    ("Progress", None),
    ("Size", None),
    ("Rate", None),
    ("ETA", None),
    ("State", None),
    ("Checksum", None),
)
# in colour roles (podtui/ui/colours.py), styled in the palette of the pane's theme
STATE_STYLES = {
    "verified": "bold good",
    "failed": "bold bad",
    "cancelled": "dim",
    "queued": "",
    "waiting_for_code": "warn",
    "transferring": "moving",
    "verifying": "checking",
}


def bar(job: TransferJob, palette: Palette = CLASSIC) -> Text:
    st = palette.style
    pct = job.percent
    if pct is None:
        return Text("━" * BAR_WIDTH + "     ", style=st("track"))
    filled = round(BAR_WIDTH * pct / 100)
    colour = {"verified": "good", "failed": "bad", "cancelled": "absent"}.get(job.state, "moving")
    return Text.assemble(("━" * filled, st(colour)), ("━" * (BAR_WIDTH - filled), st("track")), f" {pct:3.0f}%")


def size_cell(job: TransferJob) -> str:
    if job.total_bytes is None:
        return "—"
    if job.state in ("transferring", "waiting_for_code") and job.done_bytes < job.total_bytes:
        return f"{units.size(job.done_bytes)}/{units.size(job.total_bytes)}"
    return units.size(job.total_bytes)


def cells(job: TransferJob, runner: str | None = None, palette: Palette = CLASSIC) -> tuple[str | Text, ...]:
    """runner: who runs the job when another podtui does ("another podtui (pid 123)"), else None."""
    arrow = {"pull": "↓", "push": "↑"}.get(job.direction, "⇣")  # hub: Hugging Face -> pod, on the pod itself
    active = job.state in ("transferring", "waiting_for_code")
    rate = f"{units.size(job.rate_bytes_per_s)}/s" if active and job.rate_bytes_per_s else ""
    eta = units.duration(job.eta_s) if active and job.eta_s is not None else ""
    state = job.state_label
    if job.state == "queued" and job.error:  # waiting out a backoff before the next attempt
        state = "retry soon"
    if job.state == "waiting_for_code" and job.code:
        state = f"code {job.code[:4]}-…"
    if runner is not None and not job.finished:
        state += " (elsewhere)"
    checksum = f"{job.algorithm} {job.checksum[:8]}" if job.checksum else job.algorithm
    if job.direction == "hub":  # each file against the Hub's own sha256 / git sha1
        checksum = f"{len(job.hub_files)} files {'✓' if job.state == 'verified' else 'vs Hub'}"
    return (
        Text(visible(job.label), overflow="ellipsis", no_wrap=True),
        Text(visible(job.pod_name or job.pod_id), overflow="ellipsis", no_wrap=True),
        arrow,
        bar(job, palette),
        size_cell(job),
        rate,
        eta,
        Text(state, style=palette.style(STATE_STYLES.get(job.state, ""))),
        checksum,
    )


def detail(
    job: TransferJob,
    runner: str | None = None,
    hold: str | None = None,
    forgettable: bool = False,
    forget_key: str = "d",
) -> str:
    """The line under the table for the highlighted transfer: where it goes, who runs it, and why it failed.
    hold: what holds back its "then terminate" (another podtui's transfer from the pod); forgettable: it is another
    podtui's that this one can never take over (TransferQueue.forgettable), so `forget_key` forgets it."""
    where = f"{visible(job.source)} → {visible(job.final_path or job.target or '(pod folder)')}"
    if job.direction == "hub":
        where = (
            f"Hugging Face {job.repo_type} {visible(job.source)} → {visible(job.final_path or job.target)} on the pod"
        )
    if job.route:
        where += f"   · via {job.route}"
    if runner is not None:  # a host name written by another podtui: text from outside
        where += f"   · run by {visible(runner)}: shown as it last wrote it; act on it there"
        if forgettable:
            where += f" (if it has stopped, {forget_key} forgets it here)"
    if job.error:
        return f"{where}\n{visible(job.error)}"
    if hold is not None:
        return f"{where}\nthen terminate the pod: waits, as {visible(hold)}"
    if job.terminate_after:
        where += "   · then terminate the pod"
    return where
