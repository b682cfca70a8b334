"""A demo pod whose shell is not isolated from this machine: the simulator found no mount namespaces here (or was
told not to use them), so the pod's /workspace is a folder on this machine and any other path on the pod is this
machine's own. Such pods carry their folder in their env, and transfers keep inside it."""

from __future__ import annotations

import posixpath

from podtui.core.pod import Pod
from podtui.core.visible import visible

SANDBOX_ENV = "PODTUI_DEMO_SANDBOX"  # the pod's folder on this machine; only on pods that are not isolated
OWN = ("workspace", "root", "tmp")  # in that folder: the pod's /workspace, home and /tmp (the rest is the simulator's)


def transfer_path_refusal(pod: Pod, path: str, relative_to: str | None = None) -> str | None:
    """Why a transfer may not use `path` on `pod`, or None when it may (every pod that is not such a demo pod).
    relative_to: where a relative path starts on the pod; None: where its shell starts, its workspace folder."""
    folder = dict(pod.env).get(SANDBOX_ENV)
    if not folder:
        return None
    folder = posixpath.normpath(folder)
    if path == "~" or path.startswith("~/"):
        full = posixpath.join(folder, "root", path[2:])
    else:
        full = posixpath.join(relative_to or posixpath.join(folder, "workspace"), path)
    full = posixpath.normpath(full)
    if any(full == own or full.startswith(own + "/") for own in (posixpath.join(folder, name) for name in OWN)):
        return None
    return (
        f"{visible(path) or 'that path'} is outside this demo pod's folders (in {visible(folder)}): the pod is "
        "not isolated from this machine (no mount namespaces here), so its other paths are this machine's "
        "own files; use a path relative to its /workspace"
    )
