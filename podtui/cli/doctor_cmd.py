"""`podtui doctor POD [--json]`: the checks people do by hand on a fresh pod, each pass / warn / fail with the fix."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from podtui.cli.session import open_session
from podtui.core.api.client import find_pod
from podtui.core.doctor import DoctorReport, PodNotReady, doctor_pod
from podtui.core.paths import Paths
from podtui.core.visible import visible, visible_fields

MARK = {"pass": "PASS", "warn": "WARN", "fail": "FAIL", "skip": "SKIP"}


def fill_parser(d: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None:
    """`podtui doctor`'s parser (its line in `podtui --help` is in podtui.cli.main.READY)."""
    d.description = (
        "Runs the checks people otherwise do by hand, through the pod's shell "
        "(RunPod's gateway works). Exit status 1 when a check fails."
    )
    d.add_argument("pod", help="pod id or name")
    d.add_argument("--json", action="store_true", help="one JSON object")


def render(report: DoctorReport, out: TextIO) -> None:
    width = max(len(c.title) for c in report.checks)
    for c in report.checks:
        out.write(f"  {MARK[c.status]}  {c.title:<{width}}  {c.finding}\n")
        if c.remedy and c.status != "pass":
            pad = " " * (width + 8)
            out.write(f"{pad}  fix: {c.remedy}" + (f":\n{pad}    {c.command}" if c.command else "") + "\n")
    counts = ", ".join(f"{report.count(s)} {s}" for s in ("fail", "warn", "pass") if report.count(s))
    out.write(f"{counts}\n")


def main(args: argparse.Namespace, paths: Paths, demo: bool, read_only: bool, out: TextIO | None = None) -> int:
    out = out or sys.stdout  # looked up now: the CLI wraps it (podtui.cli.output)
    with open_session(demo, paths) as session:
        pod = find_pod(session.api, args.pod)
        try:
            report = doctor_pod(pod, session.ssh_settings())
        except PodNotReady as e:
            sys.stderr.write(f"podtui: {visible(str(e))}\n")
            return 1
    if args.json:
        out.write(json.dumps({"pod": {"id": pod.id, "name": pod.name, "image": pod.image}, **report.to_json()}) + "\n")
    else:
        shown = visible_fields(pod)
        out.write(f"{shown.name} ({shown.id}) · {shown.gpu_label} · {shown.image or 'image unknown'}\n")
        render(visible_fields(report), out)  # what the pod printed, each finding on its line
    return 1 if report.worst == "fail" else 0
