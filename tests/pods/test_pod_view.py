"""Sorting and filtering the pod list, independent of any widget."""

from __future__ import annotations

from podtui.core.pod import GpuSample, Pod, PodStatus, Runtime
from podtui.ui.pod_view import arrange, gpu_names, matches, util_text


def mk(
    pid: str,
    name: str,
    status: PodStatus = PodStatus.RUNNING,
    util: float | None = 50.0,
    cost: float | None = 0.5,
    gpu: str = "RTX 3090",
) -> Pod:
    rt = Runtime(uptime_s=100, gpus=(GpuSample("g", util, 10),)) if util is not None else None
    return Pod(id=pid, name=name, status=status, gpu_count=1, gpu_name=gpu, cost_per_hr=cost, runtime=rt)


PODS = [
    mk("a1", "zeta", util=10),
    mk("b2", "alpha", util=90, cost=2.0),
    mk("c3", "Mid", PodStatus.EXITED, util=None),
    mk("d4", "beta", util=None, cost=None, gpu="H100"),
]


def test_sort_by_name_is_case_insensitive() -> None:
    assert [p.name for p in arrange(PODS, "", "name", False)] == ["alpha", "beta", "Mid", "zeta"]
    assert [p.name for p in arrange(PODS, "", "name", True)] == ["zeta", "Mid", "beta", "alpha"]


def test_missing_values_sort_last_both_ways() -> None:
    assert [p.id for p in arrange(PODS, "", "util", False)] == ["a1", "b2", "d4", "c3"]
    assert [p.id for p in arrange(PODS, "", "util", True)][:2] == ["b2", "a1"]
    assert [p.id for p in arrange(PODS, "", "rate", True)][-1] == "d4"


def test_filter_words_all_must_match() -> None:
    assert [p.id for p in arrange(PODS, "h100", "name", False)] == ["d4"]
    assert [p.id for p in arrange(PODS, "exited", "name", False)] == ["c3"]
    assert [p.id for p in arrange(PODS, "RTX running", "name", False)] == ["b2", "a1"]
    assert arrange(PODS, "nothing-like-this", "name", False) == []
    assert matches(PODS[0], "  ")


def test_filter_with_hostile_text() -> None:
    for q in ['"', "{", "\n", "ü", "[bold]", "\\"]:
        arrange(PODS, q, "name", False)  # never raises


def test_util_bar() -> None:
    assert util_text(None).plain.strip() == "—"
    t = util_text(100)
    assert t.plain.startswith("██████████") and t.plain.endswith("100%")
    assert util_text(-5).plain.endswith("  0%") and util_text(250).plain.endswith("100%")


def test_the_list_names_a_gpu_without_its_makers_words() -> None:
    def on(gpu: str | None, count: int | None = 1) -> Pod:
        return Pod(id="x", name="x", status=PodStatus.RUNNING, gpu_count=count, gpu_name=gpu)

    assert gpu_names(on("NVIDIA GeForce RTX 4090")) == ("RTX 4090", "RTX 4090")  # as RunPod's console shows it
    assert gpu_names(on("NVIDIA H100 80GB HBM3", 2)) == ("2\u00d7 H100 SXM", "2\u00d7 H100 SXM")
    assert gpu_names(on("AMD Instinct MI300X OAM")) == ("MI300X", "MI300X")
    assert gpu_names(on("cpu3c", 0)) == ("CPU", "CPU") and gpu_names(on(None, None)) == ("?", "?")
    # the filter still finds it by the whole id
    assert [p.name for p in arrange([mk("a", "a", gpu="NVIDIA GeForce RTX 4090")], "nvidia geforce", "gpu", False)]
