"""`podtui run`, `podtui jobs` and `podtui job` as a user runs them, in this process against the whole simulator:
what each prints and its exit status, `--json`'s shape, every kind of bad input said in words (exit 2 for usage, 1
for a pod or job), and nothing from a pod (a job's name, its log, a record) reaching the terminal as a control
sequence (docs/jobs.md#the-cli)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from podtui.cli.job_pod import LINE_MAX, LogLines
from podtui.core import secret
from podtui.core.jobs.job_memory import JobMemory
from podtui.core.paths import Paths
from podtui.core.pod import Pod
from podtui.sim.simulator import Simulator
from tests.helpers.jobs import GARBAGE_JOBS, jobs_dir, wait_until, write_garbage
from tests.helpers.sim import DEMO_IDS
from tests.jobs.conftest import Cli

CONTROLS = ("\x1b", "\x07", "\r", "\x9b")


def _clean(*texts: str) -> bool:
    return not any(c in text for text in texts for c in CONTROLS)


def test_run_list_follow_and_cancel(cli: Cli, pod: Pod, pod_key: str, full_sim: Simulator) -> None:
    name = pod.name
    code, out, err = cli(
        "run", name, "--name", "train", "--", "echo hello; while [ ! -f go ]; do sleep 0.1; done; echo bye"
    )
    assert code == 0, err
    job_id = out.strip()
    assert out == job_id + "\n"  # the id alone on stdout: `id=$(podtui run ...)` works
    assert f"job {job_id} on {name}: running; its log: podtui job {name} {job_id} log --follow" in err
    assert "when it ends: nothing more" in err

    code, out, err = cli("jobs", name)
    assert code == 0, err
    header, row = out.splitlines()[:2]
    assert header.split() == ["ID", "NAME", "COMMAND", "STATE", "EXIT", "STARTED", "TOOK", "COST"]
    assert row.startswith(job_id) and " train " in row and " running " in row and "echo hello; while [ !" in row

    code, out, err = cli("job", name, job_id, "log")
    assert (code, out) == (0, "hello\n") and f"job {job_id} is still running" in err

    (jobs_dir(full_sim, pod_key).parent.parent / "go").touch()
    code, out, err = cli("job", name, job_id, "log", "--follow")
    assert (code, out) == (0, "hello\nbye\n") and f"job {job_id} done, exit code 0" in err

    code, out, err = cli("run", name, "--", "sleep", "600")
    assert code == 0, err
    sleeper = out.strip()
    code, out, err = cli("job", name, sleeper, "cancel", "--grace", "1")
    assert (code, out) == (0, f"job {sleeper} cancelled, exit code 143\n"), (out, err)  # sleep's SIGTERM
    code, out, err = cli("job", name, sleeper, "cancel")
    assert code == 1 and f"job {sleeper} has ended already (cancelled" in err

    code, out, err = cli("jobs", name, "--json")
    assert code == 0, err
    listed = json.loads(out)
    assert listed["pod"] == {"id": pod.id, "name": name, "cost_per_hr": pod.cost_per_hr}
    assert [j["id"] for j in listed["jobs"]] == [sleeper, job_id] and listed["problems"] == []
    first = listed["jobs"][1]
    assert set(first) == {
        "id", "pod_id", "name", "command", "workdir", "state", "exit_code", "started", "ended", "duration_s", "cost",
        "then", "pulls", "log_bytes", "log_dropped", "note",
    }  # fmt: skip
    assert (first["state"], first["exit_code"], first["name"], first["log_bytes"]) == ("done", 0, "train", 10)
    assert first["cost"] == round(pod.cost_per_hr * first["duration_s"] / 3600, 4)


def test_run_records_then_and_pulls_and_says_what_happens_at_the_end(
    cli: Cli, full_sim: Simulator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = tmp_path / "project"
    here.mkdir()
    monkeypatch.chdir(here)  # where the pulls land: the folder `podtui run` is typed in, whoever downloads them
    code, out, err = cli(
        "run", "eval-a100", "--name", "n", "--then", "stop", "--pull", "out/model.bin", "--pull", "log.txt:here.txt",
        "--pull", "ckpt:~/models/", "--", "true",
    )  # fmt: skip
    assert code == 0, err
    remembered = JobMemory.for_paths(Paths.default()).get(DEMO_IDS["idle"], out.strip())
    assert remembered is not None and remembered.job.then == "stop"  # the app or `podtui watch` follows it up
    assert (
        "when it ends, podtui (the app, or `podtui watch`) downloads out/model.bin, log.txt, ckpt and verifies them, "
        "then "
        "stops eval-a100 once every pull verified" in err
    )
    code, out, err = cli("jobs", "eval-a100", "--json")
    (job,) = json.loads(out)["jobs"]
    assert (job["name"], job["then"]) == ("n", "stop")
    assert job["pulls"] == [
        {"remote": "out/model.bin", "local": f"{here}/"},
        {"remote": "log.txt", "local": f"{here}/here.txt"},
        {"remote": "ckpt", "local": f"{Path.home()}/models/"},
    ]
    # options given after the pod are read up to the `--`
    code, out, err = cli("run", "eval-a100", "--name", "late", "--then", "terminate", "--", "echo", "a", "--", "b")
    assert code == 0, err
    late = out.strip()
    code, out, err = cli("jobs", "eval-a100", "--json")
    mine = next(j for j in json.loads(out)["jobs"] if j["id"] == late)
    assert (mine["name"], mine["then"], mine["command"]) == ("late", "terminate", "echo a -- b")  # a network volume


def test_a_command_that_fails_at_once_exits_1_with_its_first_lines(cli: Cli) -> None:
    code, out, err = cli("run", "eval-a100", "--", "no-such-command-podtui")
    assert code == 1 and out.strip()  # its id, to read it later
    assert f"job {out.strip()} failed at once (exit code 127)" in err
    # in the words of a shell the user typed it into, not naming podtui's file on the pod
    assert "its log begins:\nbash: line 1: no-such-command-podtui: command not found\n" in err
    assert ".podtui" not in err


def test_a_token_in_the_command_is_never_shown(cli: Cli, full_sim: Simulator) -> None:
    token, key = "hf_" + "Tk9" * 12, "sk-" + "Ab1" * 10
    command = f"HF_TOKEN={token} sh -c 'echo 1' --api-key {key} --password hunter22; echo {token}"
    code, out, err = cli("run", "eval-a100", "--name", "t", "--", command)
    assert code == 0 and token not in out + err, err
    job_id = out.strip()
    wait_until(lambda: (jobs_dir(full_sim, "idle") / job_id / "end").exists())
    shown = [cli("jobs", "eval-a100"), cli("jobs", "eval-a100", "--json"), cli("job", "eval-a100", job_id, "log")]
    for code, out, err in shown:
        assert code == 0 and all(s not in out + err for s in (token, key, "hunter22")), out + err
    (listed,) = json.loads(shown[1][1])["jobs"]
    assert listed["command"] == "HF_TOKEN=•••••• sh -c 'echo 1' --api-key •••••• --password ••••••; echo ••••••"
    assert shown[2][1] == f"1\n{secret.mask(token)}\n"  # the job echoed its token: masked as podtui masks secrets
    code, out, err = cli("run", "eval-a100", "--", f"MY_SECRET={token}x; echo $MY_SECRET; exit 3")  # fails at once
    assert code == 1 and "its log begins:" in err and f"{token}x" not in err, err


def test_options_and_words_podtui_cannot_read_are_refused_or_kept_as_typed(cli: Cli, full_sim: Simulator) -> None:
    for args, said in (
        (("run", "eval-a100", "--bogus", "--", "true"), "podtui run has no option '--bogus'"),
        (("run", "eval-a100", "-n", "x", "--", "true"), "podtui run has no option '-n'"),
        (("run", "eval-a100", "--then", "later", "--", "true"), "invalid choice: 'later'"),
    ):
        code, out, err = cli(*args)
        assert (code, out) == (2, "") and said in err, (args, err)
    # a word that is not UTF-8 (Python hands it over as surrogate escapes) goes to the pod as the bytes typed
    code, out, err = cli("run", "eval-a100", "--", "printf '%s\\n' \udcff\udcfeok")
    assert code == 0, err
    folder = jobs_dir(full_sim, "idle") / out.strip()
    wait_until(lambda: (folder / "end").exists())
    assert (folder / "end").read_text().split()[0] == "0"
    assert (folder / "cmd").read_bytes() == b"printf '%s\\n' \xff\xfeok\n"
    assert (folder / "log" / "c.00000000").read_bytes() == b"\xff\xfeok\n"


def test_a_tilde_the_local_shell_expanded_is_pointed_out(cli: Cli) -> None:
    home = str(Path.home())  # this machine's (the test's own); the pod's is /root
    code, out, err = cli(
        "run", "eval-a100", "--workdir", f"{home}/proj", "--pull", f"{home}/out.bin", "--pull", "~/kept.bin", "--",
        "true",
    )  # fmt: skip
    assert code == 1 and out.strip()  # the job ran, and failed at once: its folder is not on the pod
    for path in (f"{home}/proj", f"{home}/out.bin"):
        assert f"podtui: note: {path} is in this machine's home folder (your shell turned ~ into it)" in err
    assert "~/kept.bin is in" not in err


def test_a_command_left_running_in_the_background_is_pointed_out(cli: Cli, full_sim: Simulator) -> None:
    """`nohup python train.py &`: its shell ends at once, and the job with it, while training goes on. podtui says so
    before it starts, and the job's record says what it left running."""
    code, out, err = cli("run", "eval-a100", "--", "nohup sleep 300 >/dev/null 2>&1 &")
    assert code == 0 and "podtui: note: the command ends with &: the job ends as soon as" in err, err
    job_id = out.strip()
    wait_until(lambda: (jobs_dir(full_sim, "idle") / job_id / "end").exists())
    code, out, err = cli("jobs", "eval-a100")
    said = f"{job_id}: its command ended, leaving 1 of its processes running (started in the background)"
    assert code == 0 and said in out, out
    code, out, err = cli("run", "eval-a100", "--", "true && true")
    assert code == 0 and "note" not in err


def test_a_job_is_named_by_the_start_of_its_id(cli: Cli, full_sim: Simulator) -> None:
    ids = []
    for _ in range(2):
        code, out, err = cli("run", "eval-a100", "--", "echo hi; sleep 600")
        assert code == 0, err
        ids.append(out.strip())
    first, second = ids
    common = next(i for i in range(len(first)) if first[i] != second[i])
    code, out, err = cli("job", "eval-a100", first[: common + 1], "log")
    assert (code, out) == (0, "hi\n"), err
    code, out, err = cli("job", "eval-a100", first[:common], "cancel")  # both start so
    assert (code, out) == (1, "") and f"2 jobs on this pod start with {first[:common]}: " in err
    assert first in err and second in err
    for job_id in ids:
        code, out, err = cli("job", "eval-a100", job_id[:-1], "cancel", "--grace", "1")
        assert code == 0 and out.startswith(f"job {job_id} cancelled"), err
    code, out, err = cli("job", "eval-a100", "ffff", "log")
    assert (code, out) == (1, "") and "no job ffff on this pod" in err
    code, out, err = cli("job", "eval-a100", "A", "log")
    assert (code, out) == (2, "") and "is not a job id" in err


def test_a_progress_bar_waits_for_its_line_without_piling_up() -> None:
    """A progress bar redrawn with carriage returns for hours is one line: only its last state is kept meanwhile."""
    out = io.StringIO()
    lines = LogLines(out)
    lines.feed("epoch 1\n")
    for i in range(100_000):
        lines.feed(f"\rstep {i:6d} [{'#' * (i % 40):40s}]")
    assert len(lines.pending) < 100 and out.getvalue() == "epoch 1\n"
    lines.feed(" done\n")
    lines.feed("x" * (LINE_MAX + 10))
    lines.finish()
    assert out.getvalue().splitlines() == [
        "epoch 1",
        f"step  99999 [{'#' * 39} ] done",
        "x" * LINE_MAX,
        "x" * 10,
    ]


def test_bad_input_is_said_in_words(cli: Cli, full_sim: Simulator) -> None:
    usage = [
        (("run", "eval-a100", "--"), "nothing to run: give the command after --"),
        (("run", "eval-a100", "--", "   "), "nothing to run"),
        (("run", "eval-a100", "--pull", "", "--", "true"), "names no path on the pod"),
        (("run", "eval-a100", "--pull", ":here.txt", "--", "true"), "names no path on the pod"),
        (("run", "eval-a100", "--pull", "out.bin:", "--", "true"), "names no local path after the colon"),
        (("run", "eval-a100", "--name", "n", "true"), "give the command after --"),
        (("run", "eval-a100", "--workdir", "a\nb", "--", "true"), "without control characters"),
        (("run", "llama-lora-3090", "--then", "terminate", "--", "true"), "would delete llama-lora-3090's volume"),
        (("job", "eval-a100", "x;rm -rf /", "log"), "'x;rm -rf /' is not a job id"),
        (("job", "eval-a100", "$(id)", "cancel"), "is not a job id"),
        (("job", "eval-a100", "20260101-000000-zzzz", "cancel", "--follow"), "--follow goes with log"),
        (("job", "eval-a100", "20260101-000000-zzzz", "cancel", "--grace", "-1"), "--grace is 0 to 3600"),
    ]
    for args, said in usage:
        code, out, err = cli(*args)
        assert (code, out) == (2, "") and said in err, (args, err)
    pod_errors = [
        (("run", "no-such-pod", "--", "true"), "no-such-pod"),
        (("run", "notebook-4090", "--", "true"), "notebook-4090 is not running (EXITED)"),
        (("jobs", "notebook-4090"), "notebook-4090 is not running (EXITED)"),
        (("job", "eval-a100", "20260101-000000-zzzz", "log"), "no job 20260101-000000-zzzz on this pod"),
        (("job", "eval-a100", "20260101-000000-zzzz", "cancel"), "no job 20260101-000000-zzzz on this pod"),
        (("--read-only", "run", "eval-a100", "--", "true"), "read-only mode: starting a job on a pod"),
    ]
    for args, said in pod_errors:
        code, out, err = cli(*args)
        assert (code, out) == (1, "") and said in err and "Traceback" not in err, (args, err)
    assert not (jobs_dir(full_sim, "idle")).exists() or not any(jobs_dir(full_sim, "idle").iterdir())


def test_control_sequences_never_reach_the_terminal_raw(cli: Cli, full_sim: Simulator) -> None:
    write_garbage(jobs_dir(full_sim, "idle"))
    code, out, err = cli(
        "run", "eval-a100", "--name", "evil\x1b]52;c;aGk=\x07", "--",
        r"printf '\033[2J\033]0;pwned\007\033[31mred\033[0m\r\nprogress 10%%\rprogress 100%%\n\302\233[6n\n'",
    )  # fmt: skip
    assert code == 0, err
    job_id = out.strip()
    wait_until(lambda: (jobs_dir(full_sim, "idle") / job_id / "end").exists())
    shown = [cli("jobs", "eval-a100"), cli("job", "eval-a100", job_id, "log"), cli("job", "eval-a100", job_id, "log")]
    for code, out, err in shown:
        assert code == 0 and _clean(out, err), (out, err)
    listing, log = shown[0][1], shown[1][1]
    assert "evil\\x1b]52;c;aGk=\\x07" in listing  # the job's name, visible and inert
    assert "evil\\x1b[2J\\x1b]0;title\\x07\\r\\nforged" in listing  # a hand-written one, on one line
    assert all(g in listing for g in GARBAGE_JOBS)
    assert "its spec.json is not JSON" in shown[0][2]  # the records that cannot be read, noted on stderr
    assert log.splitlines() == ["\\x1b[2J\\x1b]0;pwned\\x07red", "progress 100%", "\\x9b[6n"]  # colours dropped
    code, out, err = cli("jobs", "eval-a100", "--json")
    assert code == 0 and _clean(out, err) and "\\u001b]52" in out
    assert {j["id"] for j in json.loads(out)["jobs"]} >= GARBAGE_JOBS | {job_id}
    assert DEMO_IDS["idle"] in out
