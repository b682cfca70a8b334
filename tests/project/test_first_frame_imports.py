"""What `podtui --demo` has imported when its first frame is on screen: none of the heavy modules that only later
work needs (the demo's simulator and its SSH, RunPod's HTTP client and SDK, the Hub, the transfer and console code,
the commands' modules). The first frame is the one bench/startup.py times, by the stamp the app writes when it is
out; the process here writes down sys.modules at that moment. No timing: a module on this path costs every start,
and the list says which."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.repo import REPO

# Run as `python -m podtui --demo --exit-when first-frame` is, with one thing more: sys.__stderr__ (where the app
# writes the bench's stamp) is wrapped, and the stamp's arrival writes sys.modules to the file named in argv[1].
DRIVER = """
import runpy, sys

class Stamped:
    def __init__(self, inner, out):
        self._inner, self._out = inner, out

    def write(self, text):
        if "podtui-bench first-frame" in text:
            with open(self._out, "w", encoding="utf-8") as f:
                f.write("\\n".join(sorted(sys.modules)))
        return self._inner.write(text)

    def __getattr__(self, name):
        return getattr(self._inner, name)

sys.__stderr__ = Stamped(sys.__stderr__, sys.argv[1])
sys.argv = ["podtui", "--demo", "--exit-when", "first-frame"]
runpy.run_module("podtui", run_name="__main__", alter_sys=True)
"""

# Each with what it is for: all of it loads when that work first starts, after the first frame.
HEAVY = {
    "paramiko": "SSH to pods (consoles, transfers, the doctor) and the demo's SSH gateway",
    "cryptography": "paramiko's keys",
    "httpx": "RunPod's REST API, on the first poll",
    "httpcore": "httpx's transport",
    "httpx_sse": "a pod's log stream, when first followed",
    "podtui.core.logs": "the same",
    "runpod": "the runpod SDK (GraphQL, for the balance)",
    "aiohttp": "the runpod SDK's HTTP",
    "requests": "the runpod SDK's and the Hub's HTTP",
    "huggingface_hub": "Hugging Face checks",
    "http.server": "the demo simulator's API",
    "socketserver": "the demo simulator's servers",
    "importlib.metadata": "the dependency floors, read before the SDK loads",
    "podtui.sim": "the demo's simulator, started by the first poll's worker",
    "podtui.sim.simulator": "the same",
    "podtui.core.api.v2": "the API client, built by the first poll's worker",
    "podtui.core.api.rest": "the same",
    "podtui.core.api.graphql": "the same",
    "podtui.core.api.sdk": "the same",
    "podtui.core.ssh.connect": "SSH",
    "podtui.core.ssh.session": "SSH",
    "podtui.core.ssh.keys": "SSH keys",
    "podtui.core.hf.check": "Hugging Face checks",
    "podtui.core.doctor": "the doctor",
    "podtui.core.gpu": "the GPU catalogue and advisor",
    "podtui.core.pod_spec": "creating a pod",
    "podtui.transfer": "transfers, resumed a second after the start",
    "podtui.transfer.queue": "the same",
    "podtui.console.link": "a console's link to its shell",
    "podtui.console.widget": "a console's widget",
    "podtui.ui.commands": "the command palette's own commands",
    "podtui.ui.screens.create_pod": "a screen opened on demand",
    "podtui.ui.screens.doctor": "the same",
    "podtui.ui.screens.gpus": "the same",
    "podtui.ui.screens.hf_check": "the same",
    "podtui.ui.screens.welcome": "the same (the demo has a key)",
    "podtui.ui.screens.console": "the same",
    "podtui.cli.create_cmd": "a command's module, loaded when the command is used",
    "podtui.cli.doctor_cmd": "the same",
    "podtui.cli.gpus_cmd": "the same",
    "podtui.cli.hf_cmd": "the same",
    "podtui.cli.sim_cmd": "the same",
    "podtui.cli.transfer_cmd": "the same",
    "textual.widgets._text_area": "widgets of screens opened on demand (checked only for [keys] remaps)",
    "textual.widgets._radio_set": "the same",
    "tree_sitter": "the same (under TextArea)",
}


@pytest.fixture(scope="module")
def first_frame_modules(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    here = tmp_path_factory.mktemp("first-frame")
    home = here / "home"
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "PYTHONPATH": str(REPO),  # this checkout, whatever the current folder holds
    }
    env.pop("RUNPOD_API_KEY", None)
    out = here / "modules.txt"
    r = subprocess.run(
        [sys.executable, "-c", DRIVER, str(out)], cwd=here, env=env, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert out.exists(), f"no first-frame stamp from the app:\n{r.stderr[-2000:]}"
    return set(out.read_text(encoding="utf-8").split())


def test_the_first_frame_is_the_pod_list(first_frame_modules: set[str]) -> None:
    """The stamp comes from the app that is being checked, with its main screen."""
    assert {"podtui.ui.app", "podtui.ui.screens.pod_list", "textual.app"} <= first_frame_modules


def test_no_heavy_module_before_the_first_frame(first_frame_modules: set[str]) -> None:
    loaded = {name: why for name, why in HEAVY.items() if name in first_frame_modules}
    assert not loaded, "imported before the first frame:\n" + "\n".join(
        f"  {name}: only needed for {why}" for name, why in sorted(loaded.items())
    )


@pytest.mark.parametrize("package", ["paramiko", "httpx", "runpod", "huggingface_hub"])
def test_the_heavy_modules_are_installed(package: str) -> None:
    """Each is installed here, so its absence above says the app did not import it, not that it could not."""
    assert importlib.util.find_spec(package) is not None


def test_the_check_sees_an_import(tmp_path: Path) -> None:
    """The driver itself: a module imported before the stamp is in the list it writes."""
    script = "import sys; import paramiko; sys.__stderr__.write('podtui-bench first-frame 0\\n')"
    driver = DRIVER.replace('runpy.run_module("podtui", run_name="__main__", alter_sys=True)', script)
    out = tmp_path / "modules.txt"
    r = subprocess.run([sys.executable, "-c", driver, str(out)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "paramiko" in out.read_text(encoding="utf-8").split()
