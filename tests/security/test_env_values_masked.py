"""A create masks the credentials among its env values wherever they may turn up later, and only them: a plain
value registered as a secret would mask every later mention of it (a WANDB_PROJECT named like the pod hides the
pod's name in every message)."""

from __future__ import annotations

from podtui.core import secret
from podtui.core.api import V2Api
from podtui.core.gpu import Cloud
from podtui.core.pod_spec import PodSpec

TOKEN = "hf_" + "Zq8" * 12


def test_a_create_masks_credentials_not_plain_values(api: V2Api) -> None:
    spec = PodSpec(
        name="masking-check",
        gpu_type_id="NVIDIA GeForce RTX 3090",
        cloud=Cloud.COMMUNITY,
        env=(("WANDB_PROJECT", "project-of-masking-check"), ("HF_TOKEN", TOKEN)),
    )
    api.create_pod(spec)
    assert secret.redact(f"token {TOKEN}") != f"token {TOKEN}"
    assert secret.redact("pod project-of-masking-check-3090") == "pod project-of-masking-check-3090"
