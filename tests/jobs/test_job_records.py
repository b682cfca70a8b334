"""The parts of jobs that need no pod: a job's state read from its record files (docs/jobs.md#states), the log's
geometry, a spec refused before it reaches a pod, UTF-8 cut at a read's end, and the on-pod scripts' shellcheck."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from podtui.core.jobs.command_text import in_background, masked_command
from podtui.core.jobs.job import JobError, JobSpec, Pull, spec_problem
from podtui.core.jobs.layout import TOOLS, jobs_dir_sh, log_geometry, new_job_id, runner_script
from podtui.core.jobs.records import STARTING_S, job_from
from podtui.core.jobs.remote_jobs import _whole_characters

SPEC = "eyJjb21tYW5kIjogInRydWUifQ=="  # {"command": "true"}, base64
NOW = 1_796_227_000.0


def _state(**lines: str) -> tuple[str, int | None, float | None, str | None]:
    job, problem = job_from("20261202-155301-k3f9", {"spec": SPEC, **lines}, "pod1", NOW)
    assert job is not None, problem
    return job.state, job.exit_code, job.ended, job.note


def test_the_state_follows_the_record_files() -> None:
    assert _state(end="0 100", started="90", alive="0 0")[:3] == ("done", 0, 100.0)
    assert _state(end="3 100", alive="0 0")[:2] == ("failed", 3)
    assert _state(end="143 100", cancel="99 1000", alive="0 0")[:2] == ("cancelled", 143)
    assert _state(runner="12 345", alive="1 1")[:2] == ("running", None)
    state, _code, _ended, note = _state(runner="12 345", pgid="13 346", alive="0 1")
    assert state == "running" and note is not None and "runner is gone" in note
    assert _state(cancel="99 1000", beat="98", alive="0 0")[:3] == ("cancelled", None, 98.0)
    assert _state(created=str(int(NOW - STARTING_S / 2)), alive="0 0")[::3] == ("running", "starting")
    state, _code, ended, note = _state(
        created=str(int(NOW - STARTING_S * 2)), runner="12 345", started="95", beat="97", alive="0 0"
    )
    assert (state, ended) == ("lost", 97.0) and note is not None and "last heard of at" in note


def test_a_log_of_chunks_counts_what_was_printed_and_dropped() -> None:
    job, _ = job_from(
        "20261202-155301-k3f9", {"spec": SPEC, "settings": "32768 4 28", "log": "00000040 100 32"}, "p", NOW
    )
    assert job is not None
    assert (job.log_bytes, job.log_dropped) == (40 * 32768 + 100, 9 * 32768)  # 41 chunks made, 32 kept


def test_the_log_geometry_and_ids() -> None:
    g = log_geometry(256 << 20)
    assert (g.chunk, g.head, g.tail, g.max_bytes) == (8 << 20, 4, 28, 256 << 20)
    assert log_geometry(1 << 20).chunk == 32 << 10
    with pytest.raises(JobError):
        log_geometry((1 << 20) - 1)
    assert new_job_id(NOW).startswith("20261202-") and len(new_job_id(NOW)) == 20


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        (JobSpec(""), "nothing to run"),
        (JobSpec(" \n\t"), "nothing to run"),
        (JobSpec("echo \0"), "NUL"),
        (JobSpec("true", name=""), "name"),
        (JobSpec("true", name="x" * 201), "name"),
        (JobSpec("true", workdir="a\nb"), "control characters"),
        (JobSpec("true", workdir=" "), "workdir"),
        (JobSpec("true", then="explode"), "stop or terminate"),  # type: ignore[arg-type]
        (JobSpec("true", pulls=(Pull(""),)), "--pull"),
        (JobSpec("true", pulls=(Pull("a\x1bb"),)), "--pull"),
        (JobSpec("true", pulls=(Pull("a", ""),)), "local path"),
        (JobSpec("true", log_max_mb=0.5), "cap"),
    ],
)
def test_a_bad_spec_is_refused_in_words(spec: JobSpec, said: str) -> None:
    problem = spec_problem(spec)
    assert problem is not None and said in problem


def test_good_specs_pass() -> None:
    assert spec_problem(JobSpec("python train.py", "train", "runs/a", "stop", (Pull("out", "here"),), 1)) is None


def test_utf8_cut_at_a_reads_end_waits() -> None:
    text = "a✓🙂".encode()
    for cut in range(len(text) + 1):
        kept = _whole_characters(text[:cut])
        assert text[:kept].decode() == text[:kept].decode("utf-8", "strict")  # never half a character
        assert kept in (0, 1, 4, 8)


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="needs shellcheck")
@pytest.mark.parametrize("dialect", ["sh", "bash"])
def test_the_on_pod_scripts_pass_shellcheck(dialect: str, tmp_path: Path) -> None:
    tools = jobs_dir_sh() + "\n" + TOOLS.read_text()  # as sent, but for its comments (shellcheck's directives)
    for name, text in (("runner.sh", runner_script()), ("tools.sh", tools)):
        script = tmp_path / name
        script.write_text(text)
        r = subprocess.run(["shellcheck", "-s", dialect, str(script)], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stdout


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        ("HF_TOKEN=hf_abcdefghijklmnopqrstu python train.py", "HF_TOKEN=•••••• python train.py"),
        (
            "python t.py --api-key=sk-abcdefghijklmnopqrstuvwx --max-tokens 512",
            "python t.py --api-key=•••••• --max-tokens 512",
        ),
        ("run --password 'two words' --lr 1e-4", "run --password '••••••' --lr 1e-4"),
        ('export WANDB_API_KEY="0123456789abcdef0123456789abcdef01234567"; x', 'export WANDB_API_KEY="••••••"; x'),
        ("HF_TOKEN=$HF_TOKEN python t.py --model meta-llama/Llama-3.1-8B-Instruct", None),  # nothing secret in it
        (
            "huggingface-cli login --token hf_zzzzzzzzzzzzzzzzzzzz && python run.py",
            "huggingface-cli login --token •••••• && python run.py",
        ),
        ("curl https://user:pw@example.com/x -o out", "curl •••••• -o out"),
        ("PASSWORD=1 echo 1 2 3", "PASSWORD=•••••• echo 1 2 3"),  # only where it stands
    ],
)
def test_a_commands_credentials_are_masked_where_they_stand(command: str, shown: str | None) -> None:
    assert masked_command(command) == (command if shown is None else shown)


def test_a_command_sent_to_the_background_is_told_apart() -> None:
    assert in_background("nohup python train.py > out.log 2>&1 &") and in_background("sleep 1 & ")
    for command in ("a && b", "python train.py", "echo a\\&", "cmd |&", "x 2>&"):
        assert not in_background(command), command
