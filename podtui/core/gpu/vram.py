"""How much GPU memory a job needs: model size x method x precision, as a breakdown a person can check.

Rules of thumb, each one the usual published figure:
- weights: parameters x bytes per parameter (fp32 4, fp16/bf16 2, int8 1, 4-bit 0.5).
- inference: weights x 1.2, the extra 20% for the KV cache, activations and the CUDA context (the common
  serving rule M = P x 4 B / (32 / Q) x 1.2).
- full fine-tuning with Adam in mixed precision: 16 bytes per parameter = fp16 weights 2 + fp16 gradients 2 +
  fp32 master weights 4 + Adam's two fp32 moments 8 (ZeRO paper, Rajbhandari et al. 2020, section 3.1).
  In plain fp32: weights 4 + gradients 4 + moments 8, also 16.
- LoRA / QLoRA: the base model is frozen (bf16, or 4-bit NF4 for QLoRA, Dettmers et al. 2023); only the
  adapters train (Hu et al. 2021): rank 16 on every linear layer of Llama-2-7B is 40M of 6.7B parameters,
  0.6%, and they carry the 16 bytes per parameter of full training.
- training activations depend on batch size and sequence length: a 30% margin on top, plus 1 GB for the CUDA
  context and kernels.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from enum import Enum


class Method(str, Enum):
    INFERENCE = "inference"
    LORA = "lora"
    QLORA = "qlora"
    FULL = "full"

    @property
    def label(self) -> str:
        return {"inference": "inference", "lora": "LoRA", "qlora": "QLoRA", "full": "full fine-tune"}[self.value]

    @property
    def trains(self) -> bool:
        return self is not Method.INFERENCE


PRECISION_BYTES = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "int8": 1.0, "4bit": 0.5}
DEFAULT_PRECISION = {Method.INFERENCE: "fp16", Method.LORA: "bf16", Method.QLORA: "4bit", Method.FULL: "bf16"}
INFERENCE_OVERHEAD = 0.20
TRAINING_MARGIN = 0.30
CUDA_CONTEXT_GB = 1.0
LORA_TRAINABLE_FRACTION = 0.006
TRAINED_BYTES = 16.0  # per trained parameter with Adam: see the module docstring
MIN_PARAMS, MAX_PARAMS = 1e6, 2e12

_SIZE = re.compile(r"(?P<num>\d+(?:\.\d+)?(?:e\d+)?)\s*(?P<unit>[kmbt])?(?:\s*params?)?", re.IGNORECASE)
_UNITS = {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}


def parse_params(text: str) -> float:
    """A model size as people write it: 350M, 1.5B, 7b, 70B, 7e9, 7000000000."""
    m = _SIZE.fullmatch(text.strip().replace("_", "").replace(",", ""))
    if m is None:
        raise ValueError(f"model size {text!r}: write it like 350M, 1.5B, 7B or 70B")
    value = float(m["num"]) * _UNITS.get((m["unit"] or "").lower(), 1.0)
    if not math.isfinite(value) or not MIN_PARAMS <= value <= MAX_PARAMS:
        raise ValueError(f"model size {text!r}: expected between 1M and 2T parameters")
    return value


def params_label(params: float) -> str:
    for unit, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6)):
        if params >= scale:
            return f"{params / scale:.3g}{unit}"
    return f"{params:.0f}"


@dataclass(frozen=True)
class Part:
    name: str
    gb: float
    why: str


@dataclass(frozen=True)
class VramEstimate:
    params: float
    method: Method
    precision: str
    parts: tuple[Part, ...]

    @property
    def total_gb(self) -> float:
        return sum(p.gb for p in self.parts)

    @property
    def title(self) -> str:
        return f"{params_label(self.params)} {self.method.label} ({self.precision})"

    def lines(self) -> list[str]:
        out = [f"{self.title}: about {self.total_gb:.1f} GB of GPU memory"]
        out += [f"  {p.name:<22} {p.gb:7.1f} GB  {p.why}" for p in self.parts]
        return out

    def as_json(self) -> dict[str, object]:
        return {
            "params": self.params,
            "method": self.method.value,
            "precision": self.precision,
            "total_gb": round(self.total_gb, 2),
            "parts": [{"name": p.name, "gb": round(p.gb, 2), "why": p.why} for p in self.parts],
        }


def estimate(params: float, method: Method, precision: str | None = None) -> VramEstimate:
    precision = (precision or DEFAULT_PRECISION[method]).lower()
    if precision not in PRECISION_BYTES:
        raise ValueError(f"precision {precision!r}: one of {', '.join(PRECISION_BYTES)}")
    b = PRECISION_BYTES[precision]
    gb = params / 1e9  # billions of parameters x bytes each = GB
    weights = Part("weights", gb * b, f"{params_label(params)} parameters x {b:g} bytes ({precision})")
    if method is Method.INFERENCE:
        return VramEstimate(
            params,
            method,
            precision,
            (
                weights,
                Part("KV cache, activations", weights.gb * INFERENCE_OVERHEAD, "+20%, the usual serving rule of thumb"),
            ),
        )
    if method is Method.FULL:
        if b < 2:
            raise ValueError(
                "a full fine-tune trains every weight: it needs fp16/bf16 or fp32, not "
                f"{precision} (for a quantized base model use qlora)"
            )
        grad_b, master_b = (b, 0.0) if precision == "fp32" else (2.0, 4.0)
        parts = [weights, Part("gradients", gb * grad_b, f"{grad_b:g} bytes per parameter")]
        if master_b:
            parts.append(Part("fp32 master weights", gb * master_b, "mixed precision keeps an fp32 copy"))
        parts.append(Part("Adam optimizer states", gb * 8.0, "two fp32 moments, 8 bytes per parameter"))
    else:
        trained = params * LORA_TRAINABLE_FRACTION
        parts = [
            Part("frozen base weights", weights.gb, weights.why),
            Part(
                "adapters + their Adam",
                trained / 1e9 * TRAINED_BYTES,
                f"~0.6% of parameters trained (rank 16), {TRAINED_BYTES:g} bytes each",
            ),
        ]
    states = sum(p.gb for p in parts)
    parts.append(
        Part(
            "activations, overhead",
            states * TRAINING_MARGIN + CUDA_CONTEXT_GB,
            "+30% for activations (batch, sequence length) + 1 GB CUDA context",
        )
    )
    return VramEstimate(params, method, precision, tuple(parts))
