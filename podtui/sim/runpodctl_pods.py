"""The simulated runpodctl's pod commands: enough for a watchdog on the pod to stop its own pod.

v2: `runpodctl pod stop ID` prints JSON, keys sorted; v1: `runpodctl stop pod ID` prints 'pod "ID" stopped'
(docs/runpod-facts.md#runpodctl-commands). Either talks to the simulated API with the pod's
own key, as the real one uses the key RunPod puts in every pod's environment. Stdlib only.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Callable


def _stop(pod_id: str) -> dict[str, object]:
    if not pod_id.replace("-", "").isalnum():
        raise ValueError(f"invalid pod id {pod_id!r}")
    query = f'mutation {{ podStop(input: {{podId: "{pod_id}"}}) {{ id desiredStatus }} }}'
    req = urllib.request.Request(
        os.environ["PODTUI_SIM_API"] + "/graphql",
        json.dumps({"query": query}).encode(),
        {"Authorization": "Bearer " + os.environ["PODTUI_SIM_KEY"], "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=10) as r:
        answer = json.load(r)
    if answer.get("errors"):
        raise ValueError(answer["errors"][0].get("message", "error"))
    return dict(answer["data"]["podStop"])


def pod_command(argv: list[str], v1: bool, out: Callable[[str], None], err: Callable[[str], None]) -> int:
    """argv from the command word on; returns the exit status, or -1 when the command is not a pod command."""
    wanted = ["stop", "pod"] if v1 else ["pod", "stop"]
    if argv[:2] != wanted:
        return -1
    if len(argv) != 3:
        err(f"Error: accepts 1 arg(s), received {len(argv) - 2}\n")
        return 1
    try:
        pod = _stop(argv[2])
    except (ValueError, KeyError, OSError, urllib.error.URLError) as e:
        err(f"Error: {e}\n")
        return 1
    out(f'pod "{pod["id"]}" stopped\n' if v1 else json.dumps(pod, sort_keys=True, indent=2) + "\n")
    return 0
