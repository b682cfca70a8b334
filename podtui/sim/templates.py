"""Templates in the simulated RunPod: the account's own (kept by the World) and RunPod's public catalogue
(docs/runpod-facts.md#templates). templates_v2.py serves them; pods_v2.py launches pods from them."""

from __future__ import annotations

import secrets
import string
from dataclasses import dataclass, field
from typing import Any

SOURCES = ("official", "verified", "community")
CATEGORIES = ("CPU", "NVIDIA", "AMD")


@dataclass
class SimTemplate:
    id: str
    name: str
    image: str
    args: str = ""
    disk: int = 20  # container disk, GB
    volume_gb: int = 0  # the persistent mount's size; 0: none
    volume_path: str = "/workspace"
    ports: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    registry: str | None = None
    serverless: bool = False
    public: bool = False
    category: str = "NVIDIA"
    start_ssh: bool = True
    start_jupyter: bool = True
    cuda_versions: list[str] = field(default_factory=list)  # [] means any
    source: str | None = None  # the public catalogue's slice (official, verified, community); None: the account's

    def mounts(self) -> dict[str, Any]:
        return {"persistent": {"size": self.volume_gb, "path": self.volume_path}} if self.volume_gb else {}

    def record(self) -> dict[str, Any]:
        """REST v2's Template. A template the caller does not own never shows its registry."""
        return {
            "id": self.id,
            "name": self.name,
            "image": self.image,
            "args": self.args,
            "disk": self.disk,
            "mounts": self.mounts(),
            "ports": list(self.ports),
            "env": dict(self.env),
            "registry": self.registry if self.source is None else None,
            "serverless": self.serverless,
            "public": self.public,
            "category": self.category,
            "startSsh": self.start_ssh,
            "startJupyter": self.start_jupyter,
            "allowedCudaVersions": list(self.cuda_versions),
        }


def new_template_id() -> str:
    """Like RunPod's: ten lowercase letters and digits."""
    return "".join(secrets.choice(string.ascii_lowercase + string.digits) for _ in range(10))


_WEB = ["8888/http", "22/tcp"]


def _public(source: str, tid: str, name: str, image: str, **more: Any) -> SimTemplate:
    return SimTemplate(tid, name, image, public=True, source=source, **more)


# RunPod's public catalogue, a handful of each slice: pod templates and serverless ones (vLLM, faster-whisper).
# None constrains CUDA: RunPod's published catalogue entry for its PyTorch template has allowedCudaVersions []
# (docs/runpod-facts.md#templates), so a pod from one is placed on whatever driver a machine has.
CATALOGUE: tuple[SimTemplate, ...] = (
    _public(
        "official",
        "runpod-torch-v280",
        "Runpod Pytorch 2.8.0",
        "runpod/pytorch:1.0.2-cu1281-torch280-ubuntu2404",
        disk=50,
        volume_gb=20,
        ports=_WEB,
    ),
    _public(
        "official",
        "runpod-torch-v240",
        "Runpod Pytorch 2.4.0",
        "runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04",
        disk=50,
        volume_gb=20,
        ports=_WEB,
    ),
    _public(
        "official",
        "runpod-torch-v21",
        "Runpod Pytorch 2.1",
        "runpod/pytorch:2.1.0-py3.10-cuda11.8.0-devel-ubuntu22.04",
        disk=20,
        volume_gb=20,
        ports=_WEB,
    ),
    _public(
        "official",
        "runpod-comfyui",
        "ComfyUI",
        "runpod/comfyui:1.2.0-cuda12.4",
        disk=40,
        volume_gb=50,
        ports=["8188/http", "8888/http", "22/tcp"],
    ),
    _public(
        "official",
        "runpod-ubuntu",
        "Runpod Ubuntu (Jupyter)",
        "runpod/base:0.6.3-cuda12.4.1",
        disk=20,
        volume_gb=20,
        ports=_WEB,
    ),
    _public(
        "official",
        "runpod-cpu-ubuntu",
        "Ubuntu 22.04 (CPU)",
        "runpod/base:0.6.3-cpu",
        disk=10,
        ports=["22/tcp"],
        category="CPU",
        start_jupyter=False,
    ),
    _public(
        "official",
        "runpod-worker-vllm",
        "vLLM Worker",
        "runpod/worker-v1-vllm:v2.7.0stable-cuda12.1.0",
        disk=20,
        env={"MODEL_NAME": "Qwen/Qwen2.5-7B-Instruct", "MAX_MODEL_LEN": "8192"},
        serverless=True,
        start_ssh=False,
        start_jupyter=False,
    ),
    _public(
        "verified",
        "y5cejece4j",
        "text-generation-webui (oobabooga)",
        "valyriantech/text-generation-webui-oneclick-ui-and-api:2.4",
        disk=10,
        volume_gb=80,
        ports=["7860/http", "5000/http", "22/tcp"],
        start_jupyter=False,
    ),
    _public(
        "verified",
        "v2ickqhz9s",
        "Axolotl (fine-tuning)",
        "axolotlai/axolotl-cloud:main-latest",
        disk=50,
        volume_gb=100,
        ports=_WEB,
        env={"JUPYTER_DIR": "/workspace"},
    ),
    _public(
        "verified",
        "k7d2m4xq1e",
        "Stable Diffusion WebUI Forge",
        "valyriantech/forge:2.0",
        disk=20,
        volume_gb=60,
        ports=["7860/http", "8888/http", "22/tcp"],
    ),
    _public(
        "community",
        "ol2x8m5rq3",
        "Ollama",
        "ollama/ollama:0.5.7",
        disk=20,
        volume_gb=50,
        ports=["11434/http", "22/tcp"],
        start_jupyter=False,
    ),
    _public(
        "community",
        "un5l0th7k2",
        "Unsloth notebooks",
        "unsloth/unsloth:2025.2-cuda12.4",
        disk=40,
        volume_gb=50,
        ports=_WEB,
    ),
    _public(
        "community",
        "fw8h1sp2er",
        "faster-whisper worker",
        "runpod/worker-faster_whisper:v0.4.1",
        disk=20,
        serverless=True,
        start_ssh=False,
        start_jupyter=False,
    ),
)
PUBLIC: dict[str, SimTemplate] = {t.id: t for t in CATALOGUE}
