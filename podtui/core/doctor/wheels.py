"""Which torch to install for a CUDA line, and the exact pip command: the doctor's remedies."""

from __future__ import annotations

import re

INDEX = "https://download.pytorch.org/whl/"
# CUDA builds download.pytorch.org serves, oldest first, and for each the torch podtui recommends: the newest that
# transformers 5 accepts (>= 2.4) on that line. 2.5.1 for cu118 is the known fix for RunPod's torch 2.1 image
# (docs/runpod-facts.md#pytorch-images).
TORCH_FOR_TAG = {"cu118": "2.5.1", "cu121": "2.5.1", "cu124": "2.5.1", "cu126": "2.7.1", "cu128": "2.7.1"}


def cuda_tag(cuda: str) -> str | None:
    """'11.8' -> 'cu118'; None when it is not a CUDA version."""
    m = re.fullmatch(r"(\d+)\.(\d+)(?:\.\d+)*", cuda.strip())
    return f"cu{m.group(1)}{m.group(2)}" if m else None


def tag_version(tag: str) -> tuple[int, int]:
    digits = tag[2:]
    return int(digits[:-1]), int(digits[-1])


def best_tag_for_driver(driver_cuda: str | None) -> str:
    """The newest build line the driver can run (a driver runs CUDA builds up to its own version)."""
    have = cuda_tag(driver_cuda or "")
    if have is None:
        return "cu118"  # the oldest line works on every driver RunPod offers
    fitting = [t for t in TORCH_FOR_TAG if tag_version(t) <= tag_version(have)]
    return fitting[-1] if fitting else "cu118"


def vision_for(torch: str) -> str:
    """torchvision goes with torch as 0.(minor+15).patch: 2.5.1 -> 0.20.1."""
    _major, minor, patch = [*torch.split("."), "0", "0"][:3]
    return f"0.{int(minor) + 15}.{patch}"


def install_command(python: str, tag: str, with_vision: bool, with_audio: bool = False) -> str:
    """`tag` must be a line in TORCH_FOR_TAG (see usable_tag): other lines have no torch new enough."""
    torch = TORCH_FOR_TAG[tag]
    packages = (
        f"torch=={torch}"
        + (f" torchvision=={vision_for(torch)}" if with_vision else "")
        + (f" torchaudio=={torch}" if with_audio else "")
    )  # torchaudio shares torch's version
    return f"{python} -m pip install --upgrade {packages} --index-url {INDEX}{tag}"


def usable_tag(build_tag: str | None, driver_cuda: str | None) -> str:
    """The CUDA line to install from: the pod's own (torch's build) when it offers a new enough torch, else the
    newest the driver runs (cu117 and older have no torch 2.4)."""
    if build_tag in TORCH_FOR_TAG and (
        driver_cuda is None or tag_version(build_tag) <= tag_version(best_tag_for_driver(driver_cuda))
    ):
        return build_tag
    return best_tag_for_driver(driver_cuda)
