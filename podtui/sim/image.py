"""What a simulated pod's image holds: its Pythons and their packages, a pip that installs into them, and a volume
that is as full as the image left it. The environment doctor reads all of it the way it reads a real pod.

The interpreters are the simulator's own Python run with `-S` (no host packages) and a site folder per image
Python; torch and transformers there are small modules carrying the version, the CUDA build and the GPUs the
pod has, and torch decides `cuda.is_available()` from its build against the simulated driver, as the real one
does. `python3 -m pip install ...` rewrites them, so the doctor's remedies can be run and seen to work.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from podtui.sim import nvidia_smi
from podtui.sim.pod_view import PACKAGE_ROOT, PodView
from podtui.sim.world import SimPod


@dataclass(frozen=True)
class Interpreter:
    version: str  # what `python3 --version` says
    packages: dict[str, str] = field(default_factory=dict)  # torch -> "2.1.0+cu118"


@dataclass(frozen=True)
class ImageProfile:
    python3: Interpreter
    python: Interpreter | None  # the image's `python` command, if any
    volume_used_gb: float = 0.0  # what the volume already holds on first start (checkpoints, datasets)
    lacks: tuple[str, ...] = ()  # programs this machine has that the image does not (rsync, for podtui sync's SFTP)


_SYSTEM_310 = Interpreter("3.10.12")
# A custom image built FROM runpod/pytorch:2.1.0 with `pip install -U transformers trl peft` on top: transformers
# 5 on torch 2.1 (docs/runpod-facts.md#pytorch-images), on a volume that old checkpoints have almost filled.
BROKEN_IMAGE = "ghcr.io/podtui-demo/llm-train:transformers5"
# A slim image without rsync: `podtui sync` falls back to SFTP over its direct SSH (docs/sync.md#routes).
NO_RSYNC_IMAGE = "ghcr.io/podtui-demo/slim:no-rsync"
_PROFILES = {
    NO_RSYNC_IMAGE: ImageProfile(Interpreter("3.10.12"), None, lacks=("rsync",)),
    BROKEN_IMAGE: ImageProfile(
        Interpreter(
            "3.10.12",
            {
                "torch": "2.1.0+cu118",
                "torchvision": "0.16.0+cu118",
                "torchaudio": "2.1.0+cu118",
                "transformers": "5.9.0",
                "trl": "0.24.0",
                "peft": "0.17.1",
            },
        ),
        _SYSTEM_310,
        volume_used_gb=47.6,
    ),
}
# runpod/pytorch:<torch>-py<python>-cuda<cuda>-..., RunPod's naming; e.g. 2.1.0-py3.10-cuda11.8.0-devel-ubuntu22.04
_RUNPOD_PYTORCH = re.compile(r"runpod/pytorch:(\d+\.\d+\.\d+)-py(3\.\d+)-cuda(\d+)\.(\d+)")
_PATCH = {"3.10": "3.10.12", "3.11": "3.11.10", "3.12": "3.12.3"}


def profile_for(image: str) -> ImageProfile:
    if image in _PROFILES:
        return _PROFILES[image]
    m = _RUNPOD_PYTORCH.match(image)
    if m:
        torch, py, major, minor = m.groups()
        version = _PATCH.get(py, py + ".0")
        vision = f"0.{int(torch.split('.')[1]) + 15}.{torch.split('.')[2]}"
        build = f"cu{major}{minor}"
        # RunPod's image build installs torch, torchvision and torchaudio together
        python3 = Interpreter(
            version,
            {
                "torch": f"{torch}+{build}",
                "torchvision": f"{vision}+{build}",
                "torchaudio": f"{torch}+{build}",
                "transformers": "4.46.3",
            },
        )
        # Up to 2.2 the image's torch lives in /usr/local/bin/python3 only; `python` is Ubuntu's own, without
        # torch (docs/runpod-facts.md#pytorch-images). Later images link python to the same interpreter.
        old = tuple(int(x) for x in torch.split(".")[:2]) < (2, 4)
        return ImageProfile(python3, _SYSTEM_310 if old else python3)
    return ImageProfile(Interpreter("3.10.12"), None)  # a plain image: Python, nothing for ML


def machine_facts(pod: SimPod) -> dict[str, object]:
    name = nvidia_smi.full_name(pod.gpu_type)
    return {
        "gpu_name": name,
        "gpu_count": pod.gpu_count,
        "memory_bytes": nvidia_smi.total_mib(name) * 2**20,
        "driver_cuda": nvidia_smi.CUDA,
    }


def install(root: Path, bin_dir: Path, pod: SimPod, view: PodView | None = None) -> None:
    """Lay the image into a pod's sandbox, once: later starts keep what pip changed there. The scripts name paths
    as the pod's processes see them (`view`)."""
    view = view or PodView(root, isolated=False)
    image = root / "image"
    profile = profile_for(pod.image)
    view.lacks = profile.lacks  # covered in its container (pod_rootfs), from the spec written next
    if not image.exists():
        image.mkdir(parents=True)
        (image / "machine.json").write_text(json.dumps(machine_facts(pod)))
        (image / "volume.json").write_text(
            json.dumps(
                {"size_gb": pod.volume_gb, "container_gb": pod.container_disk_gb, "used_gb": profile.volume_used_gb}
            )
        )
        from podtui.sim.pod_pip import write_package

        for command, interp in (("python3", profile.python3), ("python", profile.python)):
            if interp is None:
                continue
            site = image / f"{command}-site"
            site.mkdir()
            for name, version in interp.packages.items():
                write_package(site, name, version)
    for command, interp in (("python3", profile.python3), ("python", profile.python)):
        if interp is not None:
            _python_wrapper(bin_dir / command, image / f"{command}-site", interp.version, view)
            if command == "python3":
                _python_wrapper(
                    bin_dir / f"python{interp.version.rsplit('.', 1)[0]}", image / "python3-site", interp.version, view
                )
    for pip, python in (("pip", "python" if profile.python else "python3"), ("pip3", "python3")):
        _script(bin_dir / pip, f'exec "{view.inside(bin_dir / python)}" -m pip "$@"')
    df_py = shlex.quote(view.inside(Path(__file__).with_name("pod_df.py")))
    py = view.python.command
    _script(
        bin_dir / "df",
        f"""# /workspace answers with this pod's volumeInGb; anything else is the real df
for a in "$@"; do
  case "$a" in /workspace|/workspace/*) exec {py} -S {df_py} {shlex.quote(view.inside(image))} \\
    {shlex.quote(view.inside(root / "workspace"))} "$@";; esac
done
exec /bin/df "$@\"""",
    )


def _python_wrapper(path: Path, site: Path, version: str, view: PodView) -> None:
    py, site_q = view.python.command, shlex.quote(view.inside(site))
    _script(
        path,
        f"""# an image Python: the real interpreter, without the host's packages, with this image's own
case "$1" in --version|-V) echo "Python {version}"; exit 0;; esac
if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then
  shift 2
  PYTHONPATH={shlex.quote(view.inside(PACKAGE_ROOT))} exec {py} -m podtui.sim.pod_pip --site {site_q} \\
    --python {version} "$@"
fi
PYTHONPATH={site_q} PYTHONNOUSERSITE=1 exec {py} -S "$@\"""",
    )


def _script(path: Path, body: str) -> None:
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
