"""What was spent over a window of days, and on what: the Spend view's and `podtui spend`'s report
(docs/spend.md#the-spend-view).

RunPod's billing is the account's own figure and is used when it can be had; podtui's ledger of the runs it saw
(`podtui.core.ledger`) stands in when it cannot, and the report says which. With both, they are compared per pod and
in all: the ledger counts a pod's $/hr over the time podtui saw it running, which is the compute part of RunPod's
figure (the GPU, or the CPU of a CPU pod); disks and network volumes are billed besides, and pods podtui never saw
running are in RunPod's figure only. Days are UTC days: podtui's choice (RunPod does not say in which zone its
buckets begin), as the simulator's (docs/spend.md#spend-what-was-spent-and-on-what). Pure functions: the fetching is
the caller's (`gather`, in a worker or a command).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Literal

from podtui.core.billing import AccountBill, Billing, BillingQuery, PodBill, VolumeBill
from podtui.core.ledger import Run
from podtui.core.pod import Pod, Snapshot

if TYPE_CHECKING:
    from podtui.core.api.client import RunPodApi
    from podtui.core.services import Services
    from podtui.core.volume import NetworkVolume

By = Literal["pod", "gpu", "volume", "day"]
BY: tuple[By, ...] = ("pod", "gpu", "volume", "day")
Source = Literal["billing", "ledger"]
DAY_S = 86400
MAX_DAYS = 366
RANGES: tuple[tuple[int, str], ...] = ((1, "today"), (7, "7 days"), (30, "30 days"))  # the view's switch
# Ledger and billing agree within the larger of these: the ledger counts from polls, RunPod per second and late
TOLERANCE_USD = 0.10
TOLERANCE_SHARE = 0.05
REASONS = (
    "RunPod bills disks and volumes besides a pod's $/hr, and pods podtui never saw running; the ledger counts "
    "from polls, and RunPod's last hours may not be billed yet"
)
MAX_BILLING_NOTES = 3  # what was odd in RunPod's billing, said; the rest counted (all of it is in the log)
NOT_PODS = "not pods: volumes, serverless, …"
NOT_VOLUMES = "not volumes: pods, serverless, …"
# a record RunPod sent that could not be read: its money is in the total but in no row
PODS_UNREAD = "not itemised (unreadable records, volumes, serverless, …)"
VOLUMES_UNREAD = "not itemised (unreadable records, pods, serverless, …)"


@dataclass(frozen=True)
class Window:
    """`days` UTC days up to now: [start, end) with end the next midnight; `now` where the ledger stops counting."""

    days: int
    start: float
    end: float
    now: float

    @property
    def label(self) -> str:
        return dict(RANGES).get(self.days, f"{self.days} days")

    @property
    def dates(self) -> str:
        first = _day(self.start)
        last = _day(self.end - 1)
        return f"{first:%b %d}" if first.date() == last.date() else f"{first:%b %d} to {last:%b %d}"

    def day_starts(self) -> tuple[float, ...]:
        return tuple(self.start + i * DAY_S for i in range(self.days))


def _day(t: float) -> datetime:
    return datetime.fromtimestamp(t, UTC)


def window(days: int, now: float) -> Window:
    """The last `days` UTC days, today included. ValueError in words out of 1..MAX_DAYS."""
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= MAX_DAYS:
        raise ValueError(f"a number of days from 1 to {MAX_DAYS}")
    today = _day(now).replace(hour=0, minute=0, second=0, microsecond=0)
    start = today - timedelta(days=days - 1)
    return Window(days, start.timestamp(), (today + timedelta(days=1)).timestamp(), now)


def query_for(w: Window) -> BillingQuery:
    return BillingQuery("day", start=w.start, end=w.end)


@dataclass(frozen=True)
class Row:
    """One line of a breakdown: what (an id, a GPU type, a day's start), how it reads, and its amount."""

    key: str
    label: str
    amount: float
    note: str = ""  # the GPU of a pod, "terminated", "deleted": said beside the label
    other: bool = False  # the rest of the total (not pods / not volumes): drawn apart


@dataclass(frozen=True)
class PodDifference:
    pod_id: str
    label: str
    ledger: float
    billing: float

    @property
    def difference(self) -> float:
        return self.billing - self.ledger


@dataclass(frozen=True)
class Reconciliation:
    """The ledger against RunPod's pods' compute, in all and per pod (only the pods that differ beyond the
    tolerance)."""

    ledger: float
    billing: float  # the pods' GPU and CPU, as RunPod billed them
    disk: float  # what RunPod billed the pods' disks besides
    pods: tuple[PodDifference, ...] = ()
    unseen: tuple[str, ...] = ()  # pod ids RunPod billed that the ledger never saw
    unreadable: int = 0  # pod billing records that could not be read: left out, with the pods they name
    left_out: tuple[str, ...] = ()  # those pods (left out on both sides: RunPod's part of them is not known)

    @property
    def difference(self) -> float:
        return self.billing - self.ledger

    @property
    def agrees(self) -> bool:
        return not beyond(self.ledger, self.billing) and not self.pods

    def line(self) -> str:
        return self._line() + self._unread_part()

    def _unread_part(self) -> str:
        if not self.unreadable:
            return ""
        n, k = self.unreadable, len(self.left_out)
        said = f"; {n} unreadable pod billing record{'' if n == 1 else 's'} left out"
        return said + (f" with {k} pod{'' if k == 1 else 's'}" if k else "")

    def _line(self) -> str:
        if self.agrees:
            return f"ledger ${self.ledger:,.2f} and RunPod ${self.billing:,.2f} for the pods' compute agree"
        sign = "+" if self.difference > 0 else "-"
        said = (
            f"RunPod ${self.billing:,.2f} for the pods' compute, ledger ${self.ledger:,.2f} "
            f"(RunPod {sign}${abs(self.difference):,.2f})"
        )
        if self.unseen:
            n = len(self.unseen)
            said += f"; {n} pod{'' if n == 1 else 's'} podtui never saw running"
        return said


def beyond(a: float, b: float) -> bool:
    return abs(a - b) > max(TOLERANCE_USD, TOLERANCE_SHARE * max(abs(a), abs(b)))


@dataclass(frozen=True)
class SpendReport:
    window: Window
    source: Source
    source_why: str  # "RunPod's billing" or why the ledger alone
    total: float
    by_pod: tuple[Row, ...]
    by_gpu: tuple[Row, ...]
    by_volume: tuple[Row, ...]
    by_day: tuple[Row, ...]
    reconciliation: Reconciliation | None = None
    notes: tuple[str, ...] = field(default=())
    made_at: float = 0.0
    unknown_rates: int = 0  # ledger runs whose $/hr was not known: counted as $0
    volumes_why: str = ""  # why RunPod's billing of network volumes is missing (the rest was had)

    def rows(self, by: By) -> tuple[Row, ...]:
        return {"pod": self.by_pod, "gpu": self.by_gpu, "volume": self.by_volume, "day": self.by_day}[by]

    def empty_line(self, by: By) -> str:
        """What a breakdown without rows says."""
        if by == "volume" and self.source == "ledger":
            return "the ledger keeps pod runs only: network volumes need RunPod's billing"
        if by == "volume" and self.volumes_why:
            return self.volumes_why
        return "nothing spent in this window"

    @property
    def source_line(self) -> str:
        asked = _day(self.made_at).strftime("%H:%M UTC") if self.made_at else ""
        if self.source == "billing":
            return f"RunPod's billing at {asked}" if asked else "RunPod's billing"
        return "podtui's ledger only"


@dataclass(frozen=True)
class Bills:
    """The billing answers for one window: the account's and the pods' (both needed), the volumes' (None when it
    could not be had, and why)."""

    account: Billing[AccountBill]
    pods: Billing[PodBill]
    volumes: Billing[VolumeBill] | None
    volumes_why: str = ""

    @property
    def problems(self) -> tuple[str, ...]:
        return self.account.problems + self.pods.problems + (self.volumes.problems if self.volumes else ())

    @property
    def skipped(self) -> int:
        return self.account.skipped + self.pods.skipped + (self.volumes.skipped if self.volumes else 0)


def fetch_billing(api: RunPodApi, w: Window) -> Bills:
    """The account's, the pods' and the volumes' billing for `w`: raises the account's or the pods' ApiError; the
    volumes' is said in the Bills, the rest kept."""
    from podtui.core.api.errors import ApiError

    q = query_for(w)
    account, pods = api.billing(q), api.pod_billing(q)
    try:
        return Bills(account, pods, api.volume_billing(q))
    except ApiError as e:
        return Bills(account, pods, None, f"RunPod's billing of network volumes could not be had: {e}")


# --- the report ---------------------------------------------------------------------------------------------


def report(
    w: Window,
    runs: Iterable[Run],
    pods: Iterable[Pod] | None = None,
    volumes: Iterable[NetworkVolume] | None = None,
    bills: Bills | None = None,
    why_not_billing: str = "RunPod's billing was not asked",
    made_at: float = 0.0,
    all_pods_listed: bool = True,
) -> SpendReport:
    """The report for `w`: from `bills` when given, else from the ledger's `runs`; names from the current pods and
    the ledger, volume names from `volumes`. `pods` and `volumes` None: not known (their lists could not be had). A
    pod is said terminated only when the pods are known, all of them (`all_pods_listed`: no record skipped), and
    its last run has ended; a volume deleted only when the volumes are known."""
    runs = tuple(sorted((r for r in runs if r.start < w.end and r.end > w.start), key=lambda r: r.start))
    listed = tuple(pods) if pods is not None else ()
    names = {r.pod_id: r.name for r in runs} | {p.id: p.name for p in listed}
    gpus = {r.pod_id: r.gpu for r in runs} | {p.id: _gpu(p) for p in listed}
    last_open = {r.pod_id: r.open for r in runs}  # by start: each pod's last run
    gone = Gone({p.id for p in listed}, pods is not None and all_pods_listed, last_open)
    ledger_by_pod = _ledger_by_pod(runs, w)
    unknown = sum(1 for r in runs if r.per_hr is None)
    notes: list[str] = []
    if unknown:
        notes.append(f"{unknown} run{'' if unknown == 1 else 's'} in the ledger had no $/hr from RunPod: counted as $0")
    if bills is None:
        return _from_ledger(w, runs, names, gpus, gone, ledger_by_pod, why_not_billing, notes, made_at, unknown)
    known_volumes = tuple(volumes) if volumes is not None else None
    return _from_billing(w, bills, names, gpus, gone, known_volumes, ledger_by_pod, notes, made_at, unknown)


@dataclass(frozen=True)
class Gone:
    """What is known of the pods now: the ids listed, whether that list is whole, and whether each pod's last run in
    the ledger is still open."""

    current: set[str]
    whole: bool
    last_open: Mapping[str, bool]

    def note(self, pod_id: str, named: bool) -> str:
        if pod_id in self.current:
            return ""
        if not named:
            return "never seen by podtui"
        if not self.whole:
            return ""  # the pods' list could not be had (or came short): it may well be there
        return "not listed now" if self.last_open.get(pod_id) else "terminated"


def _gpu(pod: Pod) -> str:
    return "CPU" if pod.gpu_count == 0 else (pod.gpu_name or "")


def _ledger_by_pod(runs: Iterable[Run], w: Window) -> dict[str, float]:
    out: dict[str, float] = defaultdict(float)
    for r in runs:
        out[r.pod_id] += r.cost_between(w.start, min(w.end, w.now))
    return dict(out)


def _pod_label(pod_id: str, names: Mapping[str, str]) -> str:
    name = names.get(pod_id)
    return f"{name} ({pod_id})" if name and name != pod_id else pod_id


def _pod_rows(amounts: Mapping[str, float], names: Mapping[str, str], gpus: Mapping[str, str], gone: Gone) -> list[Row]:
    rows = []
    for pod_id, amount in amounts.items():
        note = ", ".join(x for x in (gpus.get(pod_id, ""), gone.note(pod_id, pod_id in names)) if x)
        rows.append(Row(pod_id, names.get(pod_id) or pod_id, amount, note))
    return _sorted(_told_apart(rows))


def _told_apart(rows: list[Row]) -> list[Row]:
    """Rows that share a label (two pods of one name) get their ids beside it."""
    seen: dict[str, int] = defaultdict(int)
    for r in rows:
        seen[r.label] += 1
    return [replace(r, label=f"{r.label} ({r.key})") if seen[r.label] > 1 and r.label != r.key else r for r in rows]


def _gpu_rows(amounts: Mapping[str, float], gpus: Mapping[str, str]) -> list[Row]:
    by: dict[str, float] = defaultdict(float)
    for pod_id, amount in amounts.items():
        by[gpus.get(pod_id) or ""] += amount
    return _sorted(Row(g or "?", g or "GPU not known (a pod podtui never saw)", a) for g, a in by.items())


def _sorted(rows: Iterable[Row]) -> list[Row]:
    return sorted(rows, key=lambda r: (-r.amount, r.label.lower(), r.key))


def _day_rows(w: Window, per_day: Mapping[float, float]) -> tuple[Row, ...]:
    return tuple(Row(_day(s).strftime("%Y-%m-%d"), f"{_day(s):%a %b %d}", per_day.get(s, 0.0)) for s in w.day_starts())


def _rest(rows: list[Row], total: float, label: str) -> list[Row]:
    rest = total - sum(r.amount for r in rows)
    if rest > 0.005:
        rows.append(Row("other", label, rest, other=True))
    return rows


def _from_ledger(
    w: Window,
    runs: tuple[Run, ...],
    names: Mapping[str, str],
    gpus: Mapping[str, str],
    gone: Gone,
    by_pod: Mapping[str, float],
    why: str,
    notes: list[str],
    made_at: float,
    unknown: int,
) -> SpendReport:
    per_day: dict[float, float] = defaultdict(float)
    until = min(w.end, w.now)
    for start in w.day_starts():
        for r in runs:
            per_day[start] += r.cost_between(start, min(start + DAY_S, until))
    notes.append("network volumes and disks are not in the ledger: RunPod's billing has them")
    return SpendReport(
        w,
        "ledger",
        why,
        sum(by_pod.values()),
        tuple(_pod_rows(by_pod, names, gpus, gone)),
        tuple(_gpu_rows(by_pod, gpus)),
        (),
        _day_rows(w, per_day),
        None,
        tuple(notes),
        made_at,
        unknown,
    )


def _from_billing(
    w: Window,
    bills: Bills,
    names: Mapping[str, str],
    gpus: Mapping[str, str],
    gone: Gone,
    volumes: tuple[NetworkVolume, ...] | None,
    ledger_by_pod: Mapping[str, float],
    notes: list[str],
    made_at: float,
    unknown: int,
) -> SpendReport:
    inside = [b for b in bills.account.records if w.start <= b.start < w.end]
    pod_bills = [b for b in bills.pods.records if w.start <= b.start < w.end]
    volume_bills = [b for b in bills.volumes.records if w.start <= b.start < w.end] if bills.volumes else []
    total = sum(b.total for b in inside)
    per_day: dict[float, float] = defaultdict(float)
    for b in inside:
        per_day[w.start + (b.start - w.start) // DAY_S * DAY_S] += b.total
    by_pod: dict[str, float] = defaultdict(float)
    compute: dict[str, float] = defaultdict(float)
    disk = 0.0
    for pb in pod_bills:
        by_pod[pb.pod_id] += pb.total
        compute[pb.pod_id] += pb.compute
        disk += pb.disk
    volume_names = {v.id: v.name for v in volumes or ()}
    by_volume: dict[str, float] = defaultdict(float)
    for vb in volume_bills:
        by_volume[vb.volume_id] += vb.total
    volume_rows = _sorted(
        _told_apart(
            [
                Row(v, volume_names.get(v, v), a, "" if v in volume_names or volumes is None else "deleted")
                for v, a in by_volume.items()
            ]
        )
    )
    notes.extend(billing_notes(bills))
    pods_rest = PODS_UNREAD if bills.pods.skipped else NOT_PODS
    volumes_rest = VOLUMES_UNREAD if bills.volumes is not None and bills.volumes.skipped else NOT_VOLUMES
    unread = bills.pods.skipped_ids
    return SpendReport(
        w,
        "billing",
        "RunPod's billing",
        total,
        tuple(_rest(_pod_rows(by_pod, names, gpus, gone), total, pods_rest)),
        tuple(_rest(_gpu_rows(by_pod, gpus), total, pods_rest)),
        tuple(_rest(volume_rows, total, volumes_rest)) if bills.volumes is not None else (),
        _day_rows(w, per_day),
        reconcile(ledger_by_pod, compute, disk, names, bills.pods.skipped, unread),
        tuple(notes),
        made_at,
        unknown,
        bills.volumes_why,
    )


def billing_notes(bills: Bills) -> list[str]:
    """What was odd in RunPod's billing, for the report's notes: the records left out counted, the first few
    oddities said and the rest counted (every one is in the log)."""
    out: list[str] = []
    if bills.volumes_why:
        out.append(bills.volumes_why)
    n = bills.skipped
    if n:
        out.append(f"{n} billing record{' was' if n == 1 else 's were'} unreadable and left out")
    problems = bills.problems
    out.extend(f"RunPod's billing: {p}" for p in problems[:MAX_BILLING_NOTES])
    if len(problems) > MAX_BILLING_NOTES:
        more = len(problems) - MAX_BILLING_NOTES
        out.append(f"and {more} more odd part{'' if more == 1 else 's'} of RunPod's billing (in the log)")
    return out


def reconcile(
    ledger: Mapping[str, float],
    billed: Mapping[str, float],
    disk: float,
    names: Mapping[str, str],
    unreadable: int = 0,
    left_out: Iterable[str] = (),
) -> Reconciliation:
    """The ledger's pods against RunPod's pods' compute: the pods that differ beyond the tolerance, largest first.
    The pods named by unreadable billing records (`left_out`) are left out on both sides: what RunPod billed them is
    not known, and the difference is not the ledger's."""
    left = tuple(left_out)
    if left:
        ledger = {p: a for p, a in ledger.items() if p not in left}
        billed = {p: a for p, a in billed.items() if p not in left}
    differ = []
    for pod_id in sorted(set(ledger) | set(billed)):
        a, b = ledger.get(pod_id, 0.0), billed.get(pod_id, 0.0)
        if beyond(a, b):
            differ.append(PodDifference(pod_id, _pod_label(pod_id, names), a, b))
    differ.sort(key=lambda d: -abs(d.difference))
    unseen = tuple(p for p in billed if p not in ledger and billed[p] > 0)
    return Reconciliation(sum(ledger.values()), sum(billed.values()), disk, tuple(differ), unseen, unreadable, left)


# --- gathering (blocking: in a worker or a command) -------------------------------------------------------------


def gather(services: Services, days: int, polled: Snapshot | None = None, *, ask: bool = True) -> SpendReport:
    """The report for the last `days` days as of now: RunPod's billing when it answers, the ledger otherwise. With
    `ask` the pods are asked for, and the ledger told what they show (a command's first look); the app passes
    the last answer its poll has (`polled`, None before the first: the pods are not known), as the poll keeps the
    ledger. ValueError for a bad `days`."""
    from podtui.core.api.errors import ApiError
    from podtui.core.ledger import Ledger

    w = window(days, services.clock())
    api = services.api
    ledger = Ledger.for_services(services)
    notes: list[str] = []
    snap = polled
    if ask:
        try:
            snap = api.fetch_snapshot()
        except ApiError as e:
            notes.append(f"the pods could not be listed ({e}): the ledger has them as last seen")
            snap = None
        else:
            trouble = ledger.observe_quietly(snap)
            if trouble and trouble != ledger.refused:
                notes.append(trouble)
    runs = ledger.between(w.start, w.end)  # read first: a file is known to be refused once it was read
    if ledger.refused:
        notes.append(ledger.refused)
    bills: Bills | None = None
    why = ""
    volumes: tuple[NetworkVolume, ...] | None = None
    try:
        bills = fetch_billing(api, w)
    except ApiError as e:
        why = f"RunPod's billing could not be had: {e}"
    if bills is not None:
        try:
            volumes = api.network_volumes()
        except ApiError as e:
            notes.append(f"the network volumes could not be listed ({e}): shown by id")
    pods = snap.pods if snap is not None else None
    whole = snap is not None and snap.skipped_records == 0
    made = report(w, runs, pods, volumes, bills, why, services.clock(), whole)
    return replace(made, notes=tuple(notes) + made.notes)
