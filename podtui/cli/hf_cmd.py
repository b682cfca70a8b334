"""`podtui hf check REPO` and `podtui hf download POD REPO`: Hugging Face access checked before any pod time is
spent, then the download run by the pod's own `hf`, verified file by file against the Hub's checksums.

Exit status: 0 all good, 1 a problem found (its remedy printed), 2 a usage error (a malformed repo id).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from podtui.cli.session import open_session, setup_logging
from podtui.core import actions, units
from podtui.core.hf.repo import DEFAULT_ENDPOINT, endpoint_from_env
from podtui.core.paths import Paths
from podtui.core.services import Services, discovered_hf_token
from podtui.core.visible import visible, visible_fields

MARKS = {"pass": "✓", "warn": "!", "fail": "✗"}


def fill_parser(hf: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    """`podtui hf`'s parser (its line in `podtui --help` is in podtui.cli.main.READY)."""
    hf.description = (
        "Check a Hugging Face repo before any pod time is spent (token, gated access, "
        "size), or download it on a pod with the pod's own hf CLI, verified file by file."
    )
    hf_sub = hf.add_subparsers(dest="hf_command", metavar="ACTION", required=True)

    def repo_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--repo-type", choices=["model", "dataset"], default="model", help="(model)")
        p.add_argument("--json", action="store_true", help="one JSON object (check) or JSON events (download)")
        p.add_argument("--endpoint", metavar="URL", help=f"the Hub (default: HF_ENDPOINT or {DEFAULT_ENDPOINT})")

    check = hf_sub.add_parser(
        "check",
        parents=[common],
        help="token, gated access, files, size and download time",
        description="Tell, before any pod time is spent: is the token valid, does the repo "
        "exist, is it gated and can this token read it (license or token scope), its files, "
        "total size and an estimated download time.",
    )
    check.add_argument("repo", metavar="REPO", help="repo id, e.g. meta-llama/Llama-3.2-1B")
    repo_options(check)
    check.add_argument(
        "--bandwidth",
        type=_positive,
        default=50.0,
        metavar="MB/S",
        help="download speed assumed for the estimate (50 MB/s, a RunPod datacenter)",
    )
    dl = hf_sub.add_parser(
        "download",
        parents=[common],
        help="download a repo on a pod (checked first)",
        description="Check the repo, then run `hf download` on the pod in the background (it "
        "survives disconnects); the token reaches the pod through the terminal into a 0600 file "
        "removed when the download ends. Exit 0 only when every file matches the Hub's checksum.",
    )
    dl.add_argument("pod", help="pod id or name")
    dl.add_argument("repo", metavar="REPO", help="repo id")
    dl.add_argument(
        "--local-dir",
        metavar="DIR",
        help="folder on the pod; a relative one is under the pod's volume (/workspace), ~/ is the "
        "pod's home (default models/NAME or datasets/NAME, so /workspace/models/NAME)",
    )
    repo_options(dl)


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0 or value == float("inf"):  # NaN too
        raise argparse.ArgumentTypeError(f"{text} MB/s: a speed above 0 is needed")
    return value


def main(args: argparse.Namespace, paths: Paths, demo: bool, read_only: bool) -> int:
    if args.hf_command == "check":
        if demo:
            with open_session(True, paths) as session:
                return cmd_check(session, args)
        setup_logging(paths)  # a check needs no RunPod account
        return cmd_check(None, args)
    actions.guard(read_only, "downloading onto a pod")
    with open_session(demo, paths) as session:
        actions.guard(session.config.read_only, "downloading onto a pod")
        return cmd_download(session, args)


def _endpoint_and_token(session: Services | None, args: argparse.Namespace) -> tuple[str, Any]:
    if session is not None:
        return args.endpoint or session.hf_endpoint(), session.hf_token()
    return args.endpoint or endpoint_from_env(), discovered_hf_token()


def cmd_check(session: Services | None, args: argparse.Namespace, out: TextIO | None = None) -> int:
    from podtui.core.hf.check import check_repo

    out = out or sys.stdout

    endpoint, token = _endpoint_and_token(session, args)
    report = check_repo(args.repo, token, endpoint, args.repo_type, args.bandwidth * 1e6)
    if args.json:
        out.write(json.dumps(report.to_json(), indent=1) + "\n")
    else:
        write_report(report, out)
    return 0 if report.ok else 1


def write_report(report: Any, out: TextIO) -> None:
    report = visible_fields(report)  # the Hub's words and file names, each on its own line
    out.write(f"{report.repo_type} {report.repo_id} on {report.endpoint}\n")
    for line in report.lines:
        out.write(f"  {MARKS[line.status]} {line.title}\n")
        if line.remedy:
            out.write(f"      → {line.remedy}\n")
    if report.files:
        width = min(60, max(len(f.path) for f in report.files))
        for f in report.files[:50]:
            out.write(f"      {f.path:<{width}}  {units.size(f.size):>9}{'  (LFS)' if f.sha256 else ''}\n")
        if len(report.files) > 50:
            out.write(f"      … and {len(report.files) - 50} more\n")


def cmd_download(
    session: Services, args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    from podtui.cli.transfer_cmd import EXIT_INTERRUPTED, _Printer
    from podtui.core.api.client import find_pod
    from podtui.core.hf.check import check_repo
    from podtui.transfer.hf_download import job_for
    from podtui.transfer.queue import TransferQueue

    out, err = out or sys.stdout, err or sys.stderr
    pod = find_pod(session.api, args.pod)
    endpoint, token = _endpoint_and_token(session, args)
    report = check_repo(args.repo, token, endpoint, args.repo_type)
    if not report.ok:
        if args.json:
            out.write(json.dumps({"event": "check_failed", "check": report.to_json()}) + "\n")
        else:
            write_report(report, err)
        return 1
    ctx = session.transfer_context(hf_token=lambda: token.value if token else None, hf_endpoint=lambda: endpoint)
    printer = _Printer(args.json, out, err)
    queue = TransferQueue(ctx, None, concurrency=1, on_change=printer.change, backoff_s=(2.0, 8.0))
    job = job_for(report, pod, args.local_dir or "")  # a pasted dataset URL says it is one: datasets/NAME
    try:
        queue.add(job)
        queue.start()
        queue.wait([job.id])
    except KeyboardInterrupt:
        queue.cancel(job.id)
        ended = queue.wait([job.id], 30)
        err.write(f"podtui: interrupted; {_stopped(queue.get(job.id), ended, visible(pod.name))}\n")
        return EXIT_INTERRUPTED
    finally:
        queue.close()
    done = queue.get(job.id) or job
    if args.json:
        printer.final(done)
    elif done.state == "verified":
        out.write(
            f"{done.final_path}  {len(done.hub_files)} files, {units.size(done.total_bytes)}, each matching "
            f"the Hub's checksum (on {visible(pod.name)})\n"
        )
    else:
        err.write(f"podtui: hf download failed: {visible(done.error or done.state)}\n")
    return 0 if done.state == "verified" else 1


def _stopped(job: Any, ended: bool, pod_name: str) -> str:
    """What an interrupt did on the pod, as far as podtui knows: never "stopped" unless it was."""
    from podtui.transfer.hf_download import STOPPED_ON_POD

    if job is None or job.final_path is None:
        return "nothing was started on the pod"
    if ended and any(STOPPED_ON_POD in line for line in job.log):
        return "the download on the pod was stopped and its token removed"
    return (
        f"podtui could not confirm that the download stopped on {pod_name}: it may still be running there, "
        f"into {job.final_path}; on the pod, `kill -- -$(cat ~/.podtui/hf/{job.id}/pid); "
        f"rm -f ~/.podtui/hf/{job.id}/token` ends it"
    )
