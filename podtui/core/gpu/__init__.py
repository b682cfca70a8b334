"""Choosing a GPU: RunPod's catalogue of GPU types, the VRAM a job needs, and the cheapest types that fit."""

from podtui.core.gpu.advice import Advice, Option, advise
from podtui.core.gpu.catalogue import Cloud, GpuCatalogue, GpuType, Stock, parse_answer
from podtui.core.gpu.vram import Method, VramEstimate, estimate, parse_params

__all__ = [
    "Advice",
    "Cloud",
    "GpuCatalogue",
    "GpuType",
    "Method",
    "Option",
    "Stock",
    "VramEstimate",
    "advise",
    "estimate",
    "parse_answer",
    "parse_params",
]
