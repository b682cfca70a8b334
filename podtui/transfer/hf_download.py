"""A Hugging Face download that runs on the pod: the pod's own `hf download`, started in the background so it
outlives the SSH session, watched from here, and verified file by file against the Hub's checksums. It runs the
jobs whose direction is "hub" (Hub -> pod; the name transfers.json keeps).

On the pod each job has a folder, ~/.podtui/hf/JOB (0700), holding run.sh, its pid (run.sh is started with
setsid, so its pid is its process group), the list of the repo's files, its log, its exit status and, while it
runs, the token. The token arrives through the terminal (RemoteShell.run's stdin, echo off), never in a command
line or the environment: one command consumes exactly its bytes with `head -c N` whatever else fails (into the
file, or into /dev/null), so they can never reach the shell itself, then starts run.sh, or removes the token if
it could not. hf reads it from the file HF_TOKEN_PATH names (mode 0600), which run.sh's EXIT trap removes
however the download ends; a cancel removes it too, in case a KILL skipped the trap; and every connect removes
any token whose run.sh is not running (a connection lost at the wrong moment).

Relative target folders are under the pod's volume (/workspace, or its volumeMountPath), not where the shell
starts (an SSH exec session starts in $HOME, on the container disk); a leading ~/ is the pod's $HOME. A demo pod
that is not isolated from this machine has its volume in its own folder here (podtui.core.demo_sandbox).

Progress is the bytes of the repo's listed files in the target folder plus huggingface_hub's .incomplete files
there, against the total the check reported. "verified" means each file's sha256 (LFS files) or git blob sha1
(the rest), computed on the pod, equals what the Hub lists for the pinned revision.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import posixpath
import re
import shlex
import time
from collections.abc import Callable

from podtui.core import secret
from podtui.core.demo_sandbox import SANDBOX_ENV, transfer_path_refusal
from podtui.core.hf.gate import SETTINGS_URL, Access, classify, remedy
from podtui.core.hf.repo import DEFAULT_ENDPOINT, RepoFile, RepoType, repo_url
from podtui.core.hf.report import HubReport, default_dir
from podtui.core.hf.token import looks_sendable
from podtui.core.pod import Pod
from podtui.core.ssh.errors import SshError
from podtui.core.ssh.remote import RemoteShell
from podtui.transfer.job import TransferJob
from podtui.transfer.progress import Reporter, TransferCancelled
from podtui.transfer.runner import TransferContext, TransferFailed, TransferRunner, reach

POLL_S = 1.0
VERIFY_BATCH = 40  # files per checksum command: a few KB of script, well inside what the shell takes at once
VERIFY_BATCH_BYTES = 2 * 2**30  # and at most this much to hash per command (a bigger file goes on its own)
HASH_BYTES_PER_S = 20e6  # a slow disk's hashing speed, for the command's time limit
DEFAULT_VOLUME = "/workspace"  # where RunPod mounts a pod's volume unless its volumeMountPath says otherwise
STOPPED_ON_POD = "stopped on the pod: its processes ended and the token removed"
REATTACH = "podtui stopped while the pod downloaded from the Hub; the download went on there: re-attaching"
TOKEN_MAX_AGE_MIN = 2  # a token older than this whose run.sh is not running is a leftover: removed at connect
_STATUS = re.compile(r"podtui-hf status=(\S*) alive=(yes|no) bytes=(\d+)")
_SUM = re.compile(r"^(\d+) ([0-9a-f]{40,64}|missing)$", re.M)

RUN_SH = """#!/bin/bash
# podtui: a Hugging Face download run by the pod's own hf CLI, in its own session so it outlives the SSH
# connection. Its pid is its process group; the token file goes away however it ends.
J={job_dir}
echo $$ > "$J/pid"
finish() {{ rc=$?; rm -f "$J/token"; [ -f "$J/status" ] || echo "$rc" > "$J/status"; }}
trap finish EXIT
trap 'exit 143' TERM
trap 'exit 129' HUP
trap 'exit 130' INT
# the token only from the file (a pod's own HF_TOKEN would win over it), and no debug log of requests
unset HF_TOKEN HUGGING_FACE_HUB_TOKEN HF_DEBUG
export HF_TOKEN_PATH="$J/token" HF_HUB_DISABLE_PROGRESS_BARS=1 HF_HUB_DISABLE_UPDATE_CHECK=1
{endpoint}if command -v hf >/dev/null 2>&1; then cli=hf
elif command -v huggingface-cli >/dev/null 2>&1; then cli=huggingface-cli
else echo "podtui: hf is not installed on the pod (pip install -U huggingface_hub)" >> "$J/log"; exit 127; fi
"$cli" download {repo} --repo-type {repo_type} {revision}--local-dir {target} >> "$J/log" 2>&1
"""


def job_dir(job: TransferJob) -> str:
    """The job's folder on the pod, as a shell word ($HOME expands there, not here)."""
    if not re.fullmatch(r"[0-9a-zA-Z_-]+", job.id):
        raise TransferFailed(f"unusable job id {job.id!r}", "bug")
    return f'"$HOME/.podtui/hf/{job.id}"'


def files_of(job: TransferJob) -> list[RepoFile]:
    return [RepoFile.from_json(f) for f in job.hub_files]


def folder_word(folder: str) -> str:
    """A folder on the pod as a shell word: a leading ~/ is the pod's $HOME (quoted, so it expands there and
    nothing else does); anything else is taken literally."""
    if folder == "~":
        return '"$HOME"'
    if folder.startswith("~/"):
        rest = folder[2:].lstrip("/")
        return '"$HOME"/' + shlex.quote(rest) if rest else '"$HOME"'
    return shlex.quote(folder)


def endpoint_line(endpoint: str) -> str:
    """run.sh's line pointing the pod's hf at the Hub podtui checked against (none for huggingface.co itself)."""
    endpoint = endpoint.rstrip("/")
    if not endpoint or endpoint == DEFAULT_ENDPOINT:
        return ""
    return f"export HF_ENDPOINT={shlex.quote(endpoint)}\n"


def volume_of(pod: Pod) -> str:
    """Where a relative target folder starts on the pod: its volume; on a demo pod that is not isolated, the
    workspace folder it has on this machine (its shell's /workspace there is this machine's own)."""
    sandbox = dict(pod.env).get(SANDBOX_ENV)
    if sandbox:
        return posixpath.join(posixpath.normpath(sandbox), "workspace")
    return pod.volume_mount_path or DEFAULT_VOLUME


def job_for(report: HubReport, pod: Pod, target: str = "") -> TransferJob:
    """The download of a checked repo onto `pod`, into `target` (default_dir when empty), at the revision and with
    the files the check saw, for the TUI and `podtui hf download` alike."""
    return TransferJob(
        pod.id,
        "hub",
        report.repo_id,
        target or default_dir(report),
        pod_name=pod.name,
        name=report.repo_id,
        repo_type=report.repo_type,
        revision=report.sha,
        total_bytes=report.total_bytes,
        hub_files=[f.to_json() for f in report.files],
    )


class HfDownload(TransferRunner):
    activity = "downloading {} onto"
    changes_pods = "downloads onto pods"
    runs_on_pod = True
    reattaching = REATTACH

    def run(self, job: TransferJob, reporter: Reporter, ctx: TransferContext) -> None:
        _run(job, reporter, ctx)

    def started_on_pod(self, job: TransferJob) -> bool:
        return job.final_path is not None  # its folder was made on the pod: run.sh may run there

    def stop_on_pod(self, job: TransferJob, ctx: TransferContext) -> str | None:
        if job.final_path is None:  # nothing was ever started for it on the pod
            return None
        why = _stop(job, ctx)
        return STOPPED_ON_POD if why is None else f"could not stop it on the pod ({why}): it may still run there"


def _run(job: TransferJob, reporter: Reporter, ctx: TransferContext) -> None:
    try:
        pod = ctx.lookup(job.pod_id)
    except Exception as e:
        raise TransferFailed(f"cannot look up pod {job.pod_id}: {e}", "api", retryable=True) from None
    with reporter.lock:
        job.pod_name, job.route, job.name = pod.name, "hf", job.name or job.source
    volume = volume_of(pod)
    if (refusal := transfer_path_refusal(pod, job.target, volume)) is not None:
        raise TransferFailed(refusal, "not_isolated")
    phase = "before"  # "starting": the start command was sent; "running": run.sh runs (or ran) on the pod
    with reach(pod, ctx.ssh_settings()) as remote:
        shell = remote.shell
        try:
            sweep_tokens(shell)
            state = poll(shell, job)
            if state.alive:
                phase = "running"
                reporter.note("the download is already running on the pod: re-attached to it")
            elif state.status == "0" and job.final_path:
                phase = "running"
                reporter.note("the download finished on the pod while podtui was away")
            else:
                phase = "starting"
                start(shell, job, reporter, ctx, volume)
                phase = "running"
            reporter.stage("transferring")
            _watch(shell, job, reporter, ctx)
            digest = verify(shell, job, reporter)
        except TransferCancelled:
            if not reporter.closing:  # the user cancelled: end it on the pod too; closing podtui leaves it running
                with contextlib.suppress(SshError, TransferFailed):
                    cancel(shell, job)
                    reporter.note(STOPPED_ON_POD)
            raise
        except SshError as e:
            what = {
                "running": "the download goes on on the pod, and a retry re-attaches to it",
                "starting": "the download may or may not have started on the pod: a retry re-attaches to it "
                "or starts it (a token left behind is removed at the next connect)",
            }.get(phase, "nothing was started on the pod; a retry starts it")
            raise TransferFailed(
                f"the connection to {pod.name} failed: {e}; {what}", "connection", retryable=True
            ) from None
    with reporter.lock:
        job.checksum = digest


def _stop(job: TransferJob, ctx: TransferContext, attempts: int = 3) -> str | None:
    """Cancel outside an attempt (a job waiting to retry, a failed one removed, one never restarted): connect,
    end the download's process group and remove the token. None when done, else why it could not be."""
    why = ""
    for attempt in range(attempts):
        if attempt:
            time.sleep(2.0 * attempt)  # a connection that just dropped may take a moment to come back
        try:
            pod = ctx.lookup(job.pod_id)
            with reach(pod, ctx.ssh_settings()) as remote:
                cancel(remote.shell, job)
                sweep_tokens(remote.shell)
            return None
        except (TransferFailed, SshError) as e:
            why = str(e)
            if isinstance(e, TransferFailed) and not e.retryable:
                break
        except Exception as e:  # an API error looking the pod up
            why = f"{type(e).__name__}: {secret.redact(str(e))}"
    return why


def sweep_tokens(shell: RemoteShell) -> None:
    """Remove every job's token whose run.sh is not running: a connection lost between writing a token and
    starting run.sh, or a KILL that skipped run.sh's trap, leaves one. A token younger than a couple of minutes
    is left alone: another job may be starting right now."""
    shell.run(
        'for t in "$HOME"/.podtui/hf/*/token; do [ -f "$t" ] || continue; J="${t%/token}"; '
        'p=$(cat "$J/pid" 2>/dev/null); if [ -n "$p" ] && kill -0 "$p" 2>/dev/null && '
        "tr '\\0' ' ' < /proc/\"$p\"/cmdline 2>/dev/null | grep -qF \"$J/run.sh\"; then continue; fi; "
        f'[ -n "$(find "$t" -mmin +{TOKEN_MAX_AGE_MIN} 2>/dev/null)" ] && rm -f -- "$t"; done; '
        "echo podtui-swept",
        timeout_s=60,
    )


class PodState:
    def __init__(self, status: str, alive: bool, done: int) -> None:
        self.status, self.alive, self.done = status, alive, done


def poll(shell: RemoteShell, job: TransferJob) -> PodState:
    jd = job_dir(job)
    # the repo's own files (their list is $J/files, NUL-separated) and hf's partial files, not whatever else
    # the folder holds; a job started before the list existed counts the folder
    if job.final_path:
        target = shlex.quote(job.final_path)
        size = (
            f'if [ -s "$J/files" ]; then b=$( {{ cd -- {target} 2>/dev/null && xargs -0 -r stat -L -c %s -- '
            f'< "$J/files" 2>/dev/null; find -L {target}/.cache/huggingface/download -type f '
            f"-name '*.incomplete' -printf '%s\\n' 2>/dev/null; }} | awk '{{s+=$1}} END {{print s+0}}'); "
            f"else b=$(find -L {target} -type f \\( -name '*.incomplete' -o ! -path '*/.cache/huggingface/*' "
            f"\\) -printf '%s\\n' 2>/dev/null | awk '{{s+=$1}} END {{print s+0}}'); fi; "
        )
    else:
        size = "b=0; "
    out = shell.run(
        f'J={jd}; p=$(cat "$J/pid" 2>/dev/null); a=no; '
        # the pidfile counts only while that pid runs this job's run.sh (pids are reused)
        f'if [ -n "$p" ] && kill -0 "$p" 2>/dev/null && tr \'\\0\' \' \' < /proc/"$p"/cmdline 2>/dev/null '
        f'| grep -qF "$J/run.sh"; then a=yes; fi; '
        # the status after the liveness: run.sh writes it before it exits, so one that has ended always has it
        # (read first, a download ending in between looked like one killed without a status)
        f's=$(cat "$J/status" 2>/dev/null); {size}'
        f'echo "podtui-hf status=$s alive=$a bytes=$b"',
        timeout_s=60,
    ).output
    m = _STATUS.search(out)
    if m is None:
        raise TransferFailed(
            f"cannot read the download's state on the pod: {out.strip()[:200] or 'no output'}", "state", retryable=True
        )
    return PodState(m.group(1), m.group(2) == "yes", int(m.group(3)))


def _put(shell: RemoteShell, job: TransferJob, name: str, data: bytes) -> None:
    """A file in the job's folder, sent as base64 in lines a terminal takes (a PTY line holds 4 KB at most)."""
    jd = job_dir(job)
    encoded = base64.b64encode(data).decode()
    lines = [encoded[i : i + 2000] for i in range(0, len(encoded), 2000)] or [""]
    for first in range(0, len(lines), 16):
        chunk = "\n".join(f'printf %s {line} | base64 -d >> "$J/{name}.part"' for line in lines[first : first + 16])
        reset = f'rm -f "$J/{name}.part"\n' if first == 0 else ""
        done = shell.run(f"J={jd}\n{reset}{chunk}\necho podtui-put", timeout_s=60)
        if "podtui-put" not in done.output:
            raise TransferFailed(
                f"cannot write {name} on the pod: {done.output.strip()[:200]}", "setup", retryable=True
            )
    shell.run(f'J={jd}; mv -f "$J/{name}.part" "$J/{name}"', timeout_s=60)


def start(
    shell: RemoteShell, job: TransferJob, reporter: Reporter, ctx: TransferContext, volume: str = DEFAULT_VOLUME
) -> None:
    token = ctx.hf_token()
    if token is not None and not looks_sendable(token):
        raise TransferFailed(
            "the Hugging Face token has characters a token never has (spaces, control "
            "characters); check HF_TOKEN or the token file",
            "token",
        )
    if token:
        secret.register(token)
    jd = job_dir(job)
    folder = folder_word(job.target)
    # a relative folder is under the volume (if the pod has that folder); a subshell: the shell stays where it is
    made = shell.run(
        f"( cd -- {shlex.quote(volume)} 2>/dev/null; mkdir -p -- {folder} && cd -- {folder} && pwd )", timeout_s=60
    )
    final = made.output.strip().splitlines()[-1:] if made.exit_code == 0 else []
    if not final or not final[0].startswith("/"):
        raise TransferFailed(f"cannot make {job.target} on the pod: {made.output.strip()[:200]}", "mkdir")
    with reporter.lock:
        job.final_path = final[0]
    made_dir = shell.run(f'( umask 077; J={jd}; mkdir -p "$J" && chmod 700 "$J" && echo podtui-dir )', timeout_s=60)
    if "podtui-dir" not in made_dir.output:
        raise TransferFailed(f"cannot prepare the download on the pod: {made_dir.output.strip()[:200]}", "setup")
    _put(shell, job, "files", b"".join(f.path.encode() + b"\0" for f in files_of(job)))
    revision = f"--revision {shlex.quote(job.revision)} " if job.revision else ""
    script = RUN_SH.format(
        job_dir=jd,
        repo=shlex.quote(job.source),
        repo_type=shlex.quote(job.repo_type),
        revision=revision,
        target=shlex.quote(final[0]),
        endpoint=endpoint_line(ctx.hf_endpoint()),
    )
    encoded = base64.b64encode(script.encode()).decode()
    data = (token + "\n").encode() if token else b""
    n = len(data)
    # One command: whatever fails, `head -c N` reads exactly the token's bytes (into the file, or into
    # /dev/null), so they never reach the shell; then run.sh starts, or the token goes. umask first: the token
    # file is the owner's only from its first byte. A hang-up before run.sh runs removes the token too.
    setup = shell.run(
        f"( umask 077; J={jd}; ok=; trap 'rm -f \"$J/token\"; exit 129' HUP INT TERM; "
        f'mkdir -p "$J" && chmod 700 "$J" && rm -f "$J/status" "$J/pid" "$J/token" && '
        f'printf %s {encoded} | base64 -d > "$J/run.sh" && ok=1; '
        f'if [ -n "$ok" ]; then head -c {n} | cat > "$J/token" || ok=; else head -c {n} > /dev/null; fi; '
        # a subshell: the interactive shell gets no job to announce ("[1] 1234", "Done") in later output
        f'if [ -n "$ok" ]; then ( setsid nohup bash "$J/run.sh" >/dev/null 2>&1 </dev/null & ); '
        f'for i in $(seq 200); do [ -s "$J/pid" ] && break; sleep 0.05; done; fi; '
        f'p=$(cat "$J/pid" 2>/dev/null); trap - HUP INT TERM; '
        f'if [ -n "$p" ]; then echo "podtui-started=$p"; else rm -f "$J/token"; echo podtui-not-started; fi )',
        timeout_s=60,
        stdin=data,
    )
    if "podtui-started=" not in setup.output:
        raise TransferFailed(
            "the download did not start on the pod (nothing runs there, and the token was "
            f"removed): {secret.redact(setup.output.replace('podtui-not-started', '').strip())[:200]}",
            "start",
            retryable=True,
        )
    reporter.note(
        f"hf download {job.source} started on the pod into {final[0]}"
        + (f" (revision {job.revision[:10]})" if job.revision else "")
    )


def _watch(shell: RemoteShell, job: TransferJob, reporter: Reporter, ctx: TransferContext) -> None:
    total = job.total_bytes
    while True:
        state = poll(shell, job)
        reporter.progress(min(state.done, total) if total else state.done, total)  # raises if cancelled
        if not state.alive:
            if state.status == "0":
                return
            raise _failure(shell, job, state.status, ctx)
        deadline = time.monotonic() + POLL_S
        while time.monotonic() < deadline:
            reporter.check()
            time.sleep(0.1)


def _failure(shell: RemoteShell, job: TransferJob, status: str, ctx: TransferContext) -> TransferFailed:
    log = shell.run(f"tail -c 4000 {job_dir(job)}/log 2>/dev/null", timeout_s=60).output
    repo_type: RepoType = "dataset" if job.repo_type == "dataset" else "model"
    endpoint = ctx.hf_endpoint().rstrip("/") or DEFAULT_ENDPOINT
    token = ctx.hf_token()

    def ask_the_hub() -> Access | None:
        # hf's CLI prints only "Access denied. Model 'X' requires approval." for any gated refusal, hiding which
        # one: the Hub is asked again from here, with the same token, and answers with its status and message
        from podtui.core.hf.check import check_repo

        try:
            return check_repo(job.source, token, endpoint, repo_type).access
        except Exception:
            return None

    return diagnose(log, status, repo_url(job.source, repo_type, endpoint), ask_the_hub, has_token=bool(token))


def diagnose(
    log: str, status: str, page: str, ask_the_hub: Callable[[], Access | None] | None = None, has_token: bool = True
) -> TransferFailed:
    """The pod's hf log turned into the same plain message and remedy `hf check` gives. has_token: a token was
    sent to the pod (a gated refusal without one needs a token, not a license)."""
    text = secret.redact(log)
    last = " ".join(line.strip() for line in text.strip().splitlines()[-3:])[:300]
    if status in ("", None) or not status.lstrip("-").isdigit():
        return TransferFailed(
            "the download on the pod stopped without an exit status (the pod restarted, or it "
            "was killed); a retry resumes it",
            "vanished",
            retryable=True,
        )
    if status == "127" or "not installed" in text:
        return TransferFailed(
            "hf is not installed on the pod: run `pip install -U huggingface_hub` there, then retry", "no_hf"
        )
    if "GatedRepo" in text or "gated repo" in text.lower() or "requires approval" in text:
        code = re.search(r"\b(401|403)\b", text)
        message = re.search(r"(Access to .*?\.(?: [^\n]*)?)$", text, re.M)
        access = classify(
            int(code.group(1)) if code else None, message.group(1) if message else text, has_token=has_token
        )
        if access == "unknown" and ask_the_hub is not None:
            access = ask_the_hub() or "unknown"
        what, todo, _ = remedy(access, page)
        return TransferFailed(f"the Hub refused: {what}; {todo}", f"gated_{access}")
    if "Invalid user token" in text or "Invalid credentials" in text or "Invalid token" in text:
        return TransferFailed(
            f"the Hub refused the token (invalid or revoked): make a new read token at {SETTINGS_URL}", "token"
        )
    if "RepositoryNotFound" in text or "Repository Not Found" in text:
        return TransferFailed(f"the Hub has no such repo, or it is private: check {page}", "not_found")
    if "No space left" in text:
        return TransferFailed("the pod's disk is full: free space or pick a bigger volume", "disk_full")
    if status in ("143", "137", "129", "130"):
        return TransferFailed(
            f"the download on the pod was stopped (exit {status}); a retry resumes it", "killed", retryable=True
        )
    return TransferFailed(f"hf download failed on the pod (exit {status}): {last or 'no output'}", "hf", retryable=True)


def cancel(shell: RemoteShell, job: TransferJob) -> None:
    """Stop the download's whole process group on the pod and remove the token file."""
    jd = job_dir(job)
    shell.run(
        f'J={jd}; p=$(cat "$J/pid" 2>/dev/null); '
        f'if [ -n "$p" ] && tr \'\\0\' \' \' < /proc/"$p"/cmdline 2>/dev/null | grep -qF "$J/run.sh"; then '
        'kill -TERM -- -"$p" 2>/dev/null; for i in $(seq 40); do kill -0 "$p" 2>/dev/null || break; '
        'sleep 0.05; done; kill -KILL -- -"$p" 2>/dev/null; fi; rm -f "$J/token"; '
        '[ -f "$J/status" ] || echo 143 > "$J/status"',
        timeout_s=30,
    )


def _sum_command(index: int, f: RepoFile) -> str:
    path = shlex.quote(f.path)
    if f.sha256:
        digest = f"sha256sum < {path} | cut -c1-64"
    else:  # git's blob id: sha1 of "blob SIZE\0" and the content
        digest = f"( printf 'blob %d\\0' \"$(stat -c %s -- {path})\"; cat -- {path} ) | sha1sum | cut -c1-40"
    return f"if [ -f {path} ]; then echo \"{index} $({digest})\"; else echo '{index} missing'; fi"


def _batches(files: list[RepoFile]) -> list[list[int]]:
    """Indexes of the files, in batches of at most VERIFY_BATCH files and VERIFY_BATCH_BYTES bytes."""
    batches: list[list[int]] = []
    size = 0
    for i, f in enumerate(files):
        if not batches or len(batches[-1]) >= VERIFY_BATCH or size + f.size > VERIFY_BATCH_BYTES:
            batches.append([])
            size = 0
        batches[-1].append(i)
        size += f.size
    return batches


def verify(shell: RemoteShell, job: TransferJob, reporter: Reporter) -> str:
    files = files_of(job)
    if not files or any(f.expected is None for f in files):
        raise TransferFailed(
            "the Hub gave no checksum for some files, so the download cannot be verified; "
            "check the repo again and retry",
            "no_checksums",
        )
    reporter.stage("verifying", f"checking {len(files)} files against the Hub's checksums on the pod")
    assert job.final_path is not None
    got: dict[int, str] = {}
    for batch in _batches(files):
        reporter.check()  # a cancel is noticed between batches; a big file is a batch of its own
        script = f"cd -- {shlex.quote(job.final_path)} || exit 3\n" + "\n".join(
            _sum_command(i, files[i]) for i in batch
        )
        size = sum(files[i].size for i in batch)
        result = shell.run(script, timeout_s=120 + size / HASH_BYTES_PER_S)  # a multi-GB file takes a while
        got.update({int(i): h for i, h in _SUM.findall(result.output)})
    bad, damaged = [], []
    for i, f in enumerate(files):
        algorithm, want = f.expected or ("", "")
        have = got.get(i)
        if have != want:
            bad.append(f"{f.path} ({'missing' if have in (None, 'missing') else f'{algorithm} differs'})")
            damaged.append(f.path)
    if damaged:  # hf would keep a damaged file it believes complete: remove it and its record, so a retry refetches
        words = " ".join(
            shlex.quote(p) + " " + shlex.quote(f".cache/huggingface/download/{p}.metadata") for p in damaged
        )
        # and its exit status: the next attempt downloads again rather than re-checking a finished run
        shell.run(f"rm -f {job_dir(job)}/status; cd -- {shlex.quote(job.final_path)} && rm -f -- {words}", timeout_s=60)
    if bad:
        raise TransferFailed(
            f"{len(bad)} of {len(files)} files do not match the Hub's checksums: "
            f"{', '.join(bad[:5])}{' …' if len(bad) > 5 else ''}; a retry downloads them again",
            "checksum",
        )
    lfs = sum(1 for f in files if f.sha256)
    reporter.note(f"{len(files)} files match the Hub: {lfs} by sha256 (LFS), {len(files) - lfs} by git blob sha1")
    # one digest standing for the whole set, shown in the queue's checksum column
    manifest = "\n".join(f"{f.path} {(f.expected or ('', ''))[1]}" for f in files)
    return hashlib.sha256(manifest.encode()).hexdigest()
