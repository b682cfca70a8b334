"""`podtui spend` as a user runs it against the simulated RunPod: the table with bars, --by, --csv with a header and
plain numbers, --json, the ledger standing in when RunPod's billing cannot be had, and --days checked."""

from __future__ import annotations

import csv
import errno
import io
import json
from datetime import UTC, datetime

import pytest

from podtui.cli.main import main
from podtui.cli.spend_cmd import cmd_spend, write_csv
from podtui.core import ledger as ledger_mod
from podtui.core.api.errors import ApiUnavailable
from podtui.core.api.v2 import V2Api
from podtui.core.bars import bar_text
from podtui.core.billing import BillingQuery
from podtui.core.ledger import Ledger, Run
from podtui.core.paths import Paths
from podtui.core.services import Services
from podtui.core.spend import report, window
from podtui.sim.server import SimApiServer

NOW = datetime(2026, 6, 3, 15, 0, tzinfo=UTC).timestamp()


@pytest.fixture
def session(api: V2Api, sim: SimApiServer, paths: Paths) -> Services:
    """The CLI's services on the simulator's clock: its billing history and the ledger agree on what today is."""
    return Services(api, paths=paths, clock=sim.world.clock.now)


def test_the_table_has_a_bar_per_row_and_says_its_source(session: Services) -> None:
    out = io.StringIO()
    assert cmd_spend(session, 7, "pod", "text", out) == 0
    text = out.getvalue()
    first = text.splitlines()[0]
    assert first.startswith("$") and "spent the last 7 days" in first and "from RunPod's billing" in first
    assert "eval-a100" in text and "█" in text and "ledger vs RunPod:" in text
    # the ledger was told what the pods show first: the running ones have runs, back-dated by their uptime
    assert {r.name for r in Ledger.for_services(session).runs()} >= {"eval-a100"}


def test_csv_has_a_header_and_plain_numbers(session: Services) -> None:
    out = io.StringIO()
    assert cmd_spend(session, 30, "gpu", "csv", out) == 0
    rows = list(csv.reader(io.StringIO(out.getvalue())))
    assert rows[0] == ["key", "label", "amount_usd", "note", "source"]
    assert len(rows) > 2 and all(float(r[2]) >= 0 and "$" not in r[2] for r in rows[1:])
    days = io.StringIO()
    cmd_spend(session, 7, "day", "csv", days)
    assert len(days.getvalue().splitlines()) == 1 + 7


def test_json_is_the_whole_report(session: Services) -> None:
    out = io.StringIO()
    assert cmd_spend(session, 30, "volume", "json", out) == 0
    data = json.loads(out.getvalue())
    assert data["days"] == 30 and data["source"] == "billing"
    assert sum(r["amount"] for r in data["by_day"]) == pytest.approx(data["total"], abs=1e-4)
    assert {"by_pod", "by_gpu", "by_volume", "reconciliation", "notes"} <= set(data)


def test_the_ledger_stands_in_when_billing_cannot_be_had(
    session: Services, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def refused(query: BillingQuery, *args: object) -> None:
        raise ApiUnavailable("RunPod did not answer (connection refused)")

    monkeypatch.setattr(session.api, "billing", refused)
    out = io.StringIO()
    assert cmd_spend(session, 1, "pod", "text", out) == 0
    text = out.getvalue()
    assert "from podtui's ledger only (RunPod's billing could not be had: RunPod did not answer" in text
    assert "eval-a100" in text
    out = io.StringIO()
    cmd_spend(session, 1, "volume", "text", out)
    assert "network volumes need RunPod's billing" in out.getvalue()


def test_the_command_line(cli_env: SimApiServer, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["spend", "--days", "30", "--by", "gpu"]) == 0
    assert "spent the last 30 days" in capsys.readouterr().out
    assert main(["spend", "--csv", "--by", "day"]) == 0
    assert capsys.readouterr().out.startswith("key,label,amount_usd,note,source\n")
    assert main(["spend", "--days", "0"]) == 2
    assert "--days" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["spend", "--json", "--csv"])


def test_bars() -> None:
    assert bar_text(0, 10, 24) == "" and bar_text(10, 10, 4) == "████" and bar_text(5, 10, 4) == "██"
    assert bar_text(0.001, 10, 4) == "▏" and bar_text(1.25, 10, 4) == "▌" and bar_text(-3, 10, 4) == ""


def _unreachable(*args: object, **kw: object) -> None:
    raise ApiUnavailable("RunPod did not answer (connection refused)")


def test_running_pods_are_not_said_terminated_when_the_pods_cannot_be_listed(
    session: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    cmd_spend(session, 1, "pod", "text", io.StringIO())  # the ledger sees the running pods
    monkeypatch.setattr(session.api, "fetch_snapshot", _unreachable)
    monkeypatch.setattr(session.api, "billing", _unreachable)
    out = io.StringIO()
    assert cmd_spend(session, 1, "pod", "text", out) == 0
    line = next(x for x in out.getvalue().splitlines() if x.startswith("eval-a100"))
    assert "terminated" not in line


def test_a_refused_ledger_is_said_when_nothing_answers(
    session: Services, paths: Paths, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    paths.data_dir.mkdir(parents=True, exist_ok=True)
    (paths.data_dir / "ledger.json").write_text("{not json")
    monkeypatch.setattr(session.api, "fetch_snapshot", _unreachable)
    monkeypatch.setattr(session.api, "billing", _unreachable)
    out = io.StringIO()
    assert cmd_spend(session, 1, "pod", "text", out) == 0
    assert out.getvalue().startswith("$0.00 spent today")
    assert "is not used" in capsys.readouterr().err


def test_a_ledger_that_cannot_be_written_is_said(
    session: Services, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def full(target: object, text: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(ledger_mod, "write_private", full)
    assert cmd_spend(session, 1, "pod", "text", io.StringIO()) == 0
    assert "could not write the ledger" in capsys.readouterr().err


def test_without_the_volumes_billing_the_rest_stays(
    session: Services, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(session.api, "volume_billing", _unreachable)
    out = io.StringIO()
    assert cmd_spend(session, 7, "volume", "text", out) == 0
    text = out.getvalue()
    assert "from RunPod's billing" in text
    assert "RunPod's billing of network volumes could not be had: RunPod did not answer" in text
    assert "network volumes could not be had" in capsys.readouterr().err
    out = io.StringIO()
    cmd_spend(session, 7, "pod", "text", out)
    assert "eval-a100" in out.getvalue() and "ledger vs RunPod" in out.getvalue()


def test_csv_cells_are_never_formulas_nor_exponents() -> None:
    w = window(1, NOW)
    runs = (
        Run("p1", '=HYPERLINK("http://x")', "NVIDIA A40", 1, 0.0000001, w.start, w.start + 3600),
        Run("p2", "@sum", "-CPU", 1, 1.0, w.start, w.start + 3600),
    )
    made = report(w, runs, None)
    out = io.StringIO()
    write_csv(out, made, "pod")
    rows = list(csv.reader(io.StringIO(out.getvalue())))[1:]
    assert [r[1] for r in rows] == ["'@sum", '\'=HYPERLINK("http://x")']
    assert rows[0][3] == "'-CPU"
    assert rows[1][2] == "0.000000" and rows[0][2] == "1.000000"
