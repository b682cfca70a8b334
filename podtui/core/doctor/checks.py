"""Judging a pod's environment: each check says pass / warn / fail in plain words, and how to fix it."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Literal

from podtui.core.doctor import wheels
from podtui.core.doctor.probe import PodReadings, PythonReadings

Status = Literal["pass", "warn", "fail", "skip"]
_RANK = {"skip": 0, "pass": 1, "warn": 2, "fail": 3}
TRANSFORMERS_5_TORCH = (2, 4)  # transformers 5 needs torch 2.4 or newer
HF_TOKENS_PAGE = "https://huggingface.co/settings/tokens"
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass(frozen=True)
class Check:
    id: str
    title: str
    status: Status
    finding: str
    remedy: str = ""  # what to do, in words
    command: str = ""  # the fix as one shell command for the pod, when there is one (typed, never run, by podtui)


@dataclass(frozen=True)
class DoctorReport:
    checks: tuple[Check, ...]

    @property
    def worst(self) -> Status:
        return max((c.status for c in self.checks), key=_RANK.__getitem__, default="pass")

    def count(self, status: Status) -> int:
        return sum(c.status == status for c in self.checks)

    def to_json(self) -> dict[str, object]:
        return {"worst": self.worst, "checks": [asdict(c) for c in self.checks]}


def _version(text: str | None) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", (text or "").split("+")[0])[:3])


def _torch_python(readings: PodReadings) -> PythonReadings | None:
    """The Python to run training with: python3 if it has torch, else python."""
    return next((p for p in readings.pythons.values() if p.has_torch), None)


def _driver_tag(readings: PodReadings) -> str:
    return wheels.best_tag_for_driver(readings.driver_cuda)


def _fix(p: PythonReadings, readings: PodReadings, tag: str | None = None) -> str:
    """The pip command that puts a working torch (and its torchvision/torchaudio, when installed) into `p`."""
    tag = tag or wheels.usable_tag(wheels.cuda_tag(p.torch_cuda or ""), readings.driver_cuda)
    return wheels.install_command(p.command, tag, "torchvision" in p.packages, "torchaudio" in p.packages)


def check_pythons(readings: PodReadings) -> Check:
    py3, py = readings.pythons["python3"], readings.pythons["python"]
    title = "python / python3"

    def label(p: PythonReadings) -> str:
        if p.path is None:
            return f"no `{p.command}`"
        if not p.probed:
            return f"`{p.command}` ({p.version or '?'}) did not answer"
        return f"`{p.command}` {p.version or ''} {'has torch' if p.has_torch else 'has no torch'}".replace("  ", " ")

    found = "; ".join(label(p) for p in (py3, py))
    if py3.has_torch and py.has_torch:
        same = py3.torch_import == py.torch_import
        return Check("python", title, "pass", found + ("" if same else " (different versions)"))
    if py3.has_torch:
        if py.path is None:
            return Check("python", title, "pass", found)
        return Check(
            "python",
            title,
            "warn",
            found,
            "run your scripts with python3 (python3 -u train.py): `python` "
            "here is another Python, and there torch is not found",
        )
    if py.has_torch:
        if py3.path is None:
            return Check("python", title, "pass", found)
        return Check(
            "python",
            title,
            "warn",
            found,
            "run your scripts with python (python -u train.py): python3 here is another Python without torch",
        )
    if py3.path is None and py.path is None:
        return Check(
            "python",
            title,
            "fail",
            "no Python on this pod",
            "use an image with Python, such as runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04",
        )
    which = "python3" if py3.path else "python"
    return Check(
        "python",
        title,
        "fail",
        found,
        f"install torch built for the driver's CUDA ({_driver_tag(readings)})",
        wheels.install_command(which, _driver_tag(readings), with_vision=False),
    )


def check_torch(readings: PodReadings) -> Check:
    p = _torch_python(readings)
    if p is None:
        broken = next((q for q in readings.pythons.values() if q.torch_error and "torch" in q.packages), None)
        if broken is not None:
            return Check(
                "torch",
                "torch",
                "fail",
                f"torch {broken.packages['torch']} is installed but does not import: {broken.torch_error}",
                "reinstall it",
                _fix(broken, readings),
            )
        return Check("torch", "torch", "fail", "torch is not installed", "see python / python3 above")
    build = f"built for CUDA {p.torch_cuda}" if p.torch_cuda else "a CPU-only build"
    finding = f"torch {p.torch_import} ({build}) in {p.command}"
    if not p.torch_cuda:
        if readings.smi == "missing":  # a CPU pod: a CPU build is what it can use
            return Check(
                "torch",
                "torch",
                "warn",
                finding + " on a pod without a GPU",
                "fine for CPU work; for training, create a GPU pod",
            )
        return Check(
            "torch", "torch", "fail", finding, "install a CUDA build", _fix(p, readings, _driver_tag(readings))
        )
    return Check("torch", "torch", "pass", finding)


def check_cuda(readings: PodReadings) -> Check:
    p = _torch_python(readings)
    if p is None:
        return Check("cuda", "CUDA", "skip", "no torch to ask")
    if p.cuda:
        return Check("cuda", "CUDA", "pass", f"torch.cuda.is_available() is True, {len(p.gpus)} GPU(s) visible")
    fix = _fix(p, readings, _driver_tag(readings))
    too_old = any("driver on your system is too old" in w for w in p.warnings)
    if too_old or (p.torch_cuda and readings.driver_cuda and _version(p.torch_cuda) > _version(readings.driver_cuda)):
        return Check(
            "cuda",
            "CUDA",
            "fail",
            f"torch is built for CUDA {p.torch_cuda} but the pod's driver runs "
            f"CUDA {readings.driver_cuda or 'older'} at most, so torch.cuda.is_available() is False",
            f"install a torch built for {_driver_tag(readings)} (or create the pod with a CUDA filter that "
            "matches the image)",
            fix,
        )
    if readings.smi == "missing" or (readings.smi == "0" and not readings.smi_rows):
        return Check(
            "cuda",
            "CUDA",
            "fail",
            "torch.cuda.is_available() is False: the pod has no GPU",
            "this is a CPU pod or its GPU is gone; create a GPU pod",
        )
    shown = f": {p.warnings[0]}" if p.warnings else ""
    return Check("cuda", "CUDA", "fail", f"torch.cuda.is_available() is False{shown}", "reinstall torch", fix)


def check_gpu(readings: PodReadings) -> Check:
    if readings.smi == "missing":
        return Check(
            "gpu",
            "GPU",
            "fail",
            "nvidia-smi is not there: no NVIDIA driver in this pod",
            "create a GPU pod (a CPU pod has no nvidia-smi)",
        )
    if readings.smi != "0":
        shown = readings.smi_rows[0] if readings.smi_rows else f"exit status {readings.smi}"
        return Check(
            "gpu",
            "GPU",
            "fail",
            f"nvidia-smi failed: {shown}",
            "restart the pod; if it persists, the machine's driver is broken: create the pod again on another machine",
        )
    gpus = []
    for row in readings.smi_rows:
        parts = [x.strip() for x in row.split(",")]
        if len(parts) >= 4 and parts[1].isdigit() and parts[2].isdigit():
            gpus.append((parts[0], int(parts[1]), int(parts[2]), parts[3]))
    if not gpus:
        return Check("gpu", "GPU", "fail", "nvidia-smi lists no GPU", "create the pod again with a GPU")
    names = sorted({g[0] for g in gpus})
    total_gb = gpus[0][1] / 1024
    free_gb = sum(g[1] - g[2] for g in gpus) / 1024
    finding = (
        f"{len(gpus)} x {', '.join(names)}, {total_gb:.0f} GB each ({free_gb:.1f} GB free in all), driver "
        f"{gpus[0][3]}" + (f", CUDA {readings.driver_cuda}" if readings.driver_cuda else "")
    )
    p = _torch_python(readings)
    if p is not None and p.cuda and len(p.gpus) < len(gpus):
        return Check(
            "gpu",
            "GPU",
            "warn",
            finding + f"; torch sees only {len(p.gpus)}",
            "check CUDA_VISIBLE_DEVICES in the pod's environment",
        )
    return Check("gpu", "GPU", "pass", finding)


def check_transformers(readings: PodReadings) -> Check:
    p = _torch_python(readings) or readings.pythons["python3"]
    version = p.packages.get("transformers")
    if version is None:
        return Check(
            "transformers",
            "transformers",
            "skip",
            f"not installed in {p.command}",
            "needed only for Hugging Face models",
            f"{p.command} -m pip install transformers",
        )
    torch = p.torch_import or p.packages.get("torch")
    if _version(version)[:1] >= (5,) and torch and _version(torch)[:2] < TRANSFORMERS_5_TORCH:
        tag = wheels.usable_tag(wheels.cuda_tag(p.torch_cuda or ""), readings.driver_cuda)
        same = tag == wheels.cuda_tag(p.torch_cuda or "")
        return Check(
            "transformers",
            "transformers",
            "fail",
            f"transformers {version} needs torch 2.4 or newer, "
            f"and {p.command} has torch {torch}: transformers runs without PyTorch",
            f"upgrade torch on the same CUDA line ({tag})"
            if same
            else f"upgrade torch; its CUDA line has no torch 2.4, so to {tag}, which the driver runs",
            _fix(p, readings, tag),
        )
    return Check(
        "transformers", "transformers", "pass", f"transformers {version}" + (f" with torch {torch}" if torch else "")
    )


def check_disk(readings: PodReadings, volume: str) -> Check:
    parts = (readings.df_line or "").split()
    # a pod without a volume still has a /workspace folder (RunPod's images make it) on the container disk:
    # only a filesystem mounted there is a volume
    mounted_at = " ".join(parts[5:])
    if readings.df_status != "0" or len(parts) < 6 or not all(x.isdigit() for x in parts[1:4]) or mounted_at != volume:
        return Check(
            "disk",
            "volume disk",
            "warn",
            f"no volume at {volume}",
            f"files outside a volume are lost when the pod stops; create the pod with a volume at {volume}",
        )
    size_kb, used_kb, free_kb = (int(x) for x in parts[1:4])
    free_gb, size_gb = free_kb / 2**20, size_kb / 2**20
    pct = 100 * used_kb / size_kb if size_kb else 100.0
    finding = f"{free_gb:.1f} GB free of {size_gb:.0f} GB on {volume} ({pct:.0f}% used)"
    remedy = (
        f"make room (du -sh {volume}/* | sort -h shows what is big; old checkpoints first), or stop the "
        "pod and give it a bigger volume in RunPod's Edit Pod"
    )
    if free_gb < 2 or pct >= 95:
        return Check("disk", "volume disk", "fail", finding + ": the next checkpoint will not fit", remedy)
    if free_gb < 10 or pct >= 85:
        return Check("disk", "volume disk", "warn", finding, remedy)
    return Check("disk", "volume disk", "pass", finding)


def check_runpodctl(readings: PodReadings) -> Check:
    if readings.runpodctl is None:
        return Check(
            "runpodctl",
            "runpodctl",
            "warn",
            "not installed: podtui moves files by SFTP or the console instead",
            "to use runpodctl transfers, install it",
            "wget -qO- cli.runpod.net | sudo bash",
        )
    text = " ".join(readings.runpodctl)
    m = re.search(r"v?(\d+)\.(\d+)\.(\d+)", text)
    if not m:
        return Check(
            "runpodctl",
            "runpodctl",
            "warn",
            f"present, but `runpodctl version` said: {text[:80]!r}",
            "reinstall it",
            "wget -qO- cli.runpod.net | sudo bash",
        )
    version = f"v{m.group(1)}.{m.group(2)}.{m.group(3)}"
    if m.group(1) == "1":
        return Check("runpodctl", "runpodctl", "pass", f"{version}, the v1 dialect (podtui reads both; v2 is current)")
    return Check("runpodctl", "runpodctl", "pass", f"{version}, the v2 dialect")


def check_hf(readings: PodReadings) -> Check:
    title = "Hugging Face login"
    login_fix = (
        "podtui can start downloads on the pod with your own token (`podtui hf download`); or run "
        "`hf auth login` on the pod and paste the token at its prompt (never `--token` on the command "
        "line: it stays in the shell history)"
    )
    if readings.hf_status in (None, "missing"):
        sources = f" (a token is set by {', '.join(readings.hf_token_sources)})" if readings.hf_token_sources else ""
        return Check(
            "hf",
            title,
            "warn",
            "no Hugging Face CLI on the pod" + sources,
            "install huggingface_hub; it brings the `hf` command",
            "python3 -m pip install -U huggingface_hub",
        )
    lines = [_ANSI.sub("", line).strip() for line in readings.hf_lines]  # hf colours its answer even into a pipe
    text = " ".join(lines).strip()
    if readings.hf_status == "0" and text and "not logged in" not in text.lower():
        # `hf auth whoami`: "✓ Logged in" then "  user: NAME"; older `huggingface-cli whoami`: the name alone
        m = re.search(r"user:\s*(\S+)", text)
        user = m.group(1) if m else next((ln for ln in lines if ln), text)
        via = f" through {' and '.join(readings.hf_token_sources)}" if readings.hf_token_sources else ""
        return Check("hf", title, "pass", f"logged in as {user}{via}")
    if "not logged in" in text.lower():
        return Check("hf", title, "warn", "not logged in: gated models (Llama, Gemma) will not download", login_fix)
    if "401" in text or "invalid" in text.lower():
        return Check(
            "hf",
            title,
            "fail",
            "the pod's token is refused by Hugging Face (401)",
            f"make a new read token at {HF_TOKENS_PAGE}, then: " + login_fix,
        )
    shown = text[:120] or f"exit status {readings.hf_status}"
    return Check("hf", title, "warn", f"could not ask Hugging Face: {shown}", "check the pod reaches huggingface.co")


# which section of the probe each check reads: a section that never answered gets "no answer", not a verdict
_NEEDS = {
    "python": ("py",),
    "torch": ("py",),
    "cuda": ("py",),
    "gpu": ("smirc",),
    "transformers": ("py",),
    "disk": ("dfrc",),
    "runpodctl": ("rpc", "rpcmissing"),
    "hf": ("hfrc",),
}


def diagnose(readings: PodReadings, volume: str = "/workspace", timed_out: bool = False) -> DoctorReport:
    checks = [
        check_pythons(readings),
        check_torch(readings),
        check_cuda(readings),
        check_gpu(readings),
        check_transformers(readings),
        check_disk(readings, volume),
        check_runpodctl(readings),
        check_hf(readings),
    ]
    why = "the pod stopped answering before this check" if timed_out else "no answer from the pod for this check"
    checks = [
        c
        if any(t in readings.seen for t in _NEEDS[c.id])
        else Check(
            c.id, c.title, "warn", why, "run the doctor again; if it repeats, the pod's shell is stuck: restart the pod"
        )
        for c in checks
    ]
    return DoctorReport(tuple(checks))
