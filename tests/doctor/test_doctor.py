"""The doctor's judgement on probe output: every check's pass / warn / fail, the exact fix commands, and output
that is garbage, truncated or missing (a verdict, never a crash)."""

from __future__ import annotations

import json

import pytest

from podtui.core.doctor import Check, diagnose, parse_probe, probe_script
from podtui.core.doctor.wheels import best_tag_for_driver, cuda_tag, install_command, vision_for

SMI = "@@smirc|0\n@@smi|NVIDIA GeForce RTX 3090, 24576, 1200, 550.54.15\n@@smicuda|12.4\n"
DF = "@@dfrc|0\n@@df|/dev/sdb 52428800 10485760 41943040 20% /workspace\n"
RPC = "@@rpc|runpodctl v2.7.2\n"
HF = "@@hfrc|0|hf auth whoami\n@@hf|user: alice\n"


def py(command: str, version: str = "3.10.12", **probe: object) -> str:
    return f"@@py|{command}|/usr/bin/{command}\n@@pyver|{command}|Python {version}\n" + (
        f"@@pyprobe|{command}|{json.dumps(probe)}\n" if probe is not None else ""
    )


TORCH_21 = {
    "torch": "2.1.0+cu118",
    "torchvision": "0.16.0+cu118",
    "transformers": "4.46.3",
    "torch_import": "2.1.0+cu118",
    "torch_cuda": "11.8",
    "cuda": True,
    "gpus": [["RTX 3090", 25769803776]],
}


def checks(output: str) -> dict[str, Check]:
    return {c.id: c for c in diagnose(parse_probe(output)).checks}


def healthy(**changes: object) -> str:
    probe = {**TORCH_21, **changes}
    return py("python3", **probe) + py("python", **probe) + SMI + DF + RPC + HF


def test_a_healthy_pod_passes_everything() -> None:
    found = checks(healthy())
    assert {c.status for c in found.values()} == {"pass"}
    assert found["hf"].finding == "logged in as alice"
    assert found["gpu"].finding.startswith("1 x NVIDIA GeForce RTX 3090, 24 GB each")


def test_transformers_5_on_torch_2_1_fails_with_the_field_guides_fix() -> None:
    found = checks(healthy(transformers="5.9.0"))
    t = found["transformers"]
    assert t.status == "fail" and "needs torch 2.4 or newer" in t.finding
    assert t.command == (
        "python3 -m pip install --upgrade torch==2.5.1 torchvision==0.20.1 "
        "--index-url https://download.pytorch.org/whl/cu118"
    )


@pytest.mark.parametrize(("torch", "cuda", "tag"), [("2.1.0+cu121", "12.1", "cu121"), ("2.2.2+cu118", "11.8", "cu118")])
def test_the_upgrade_keeps_the_cuda_line(torch: str, cuda: str, tag: str) -> None:
    t = checks(healthy(transformers="5.0.0", torch=torch, torch_import=torch, torch_cuda=cuda))["transformers"]
    assert t.status == "fail" and t.command.endswith(f"/whl/{tag}")


def test_transformers_5_on_torch_2_4_is_fine_and_absent_transformers_is_skipped() -> None:
    assert (
        checks(healthy(transformers="5.9.0", torch_import="2.4.0+cu124", torch_cuda="12.4"))["transformers"].status
        == "pass"
    )
    probe = {k: v for k, v in TORCH_21.items() if k != "transformers"}
    t = checks(py("python3", **probe) + SMI + DF + RPC + HF)["transformers"]
    assert t.status == "skip" and t.command == "python3 -m pip install transformers"


def test_python_without_torch_next_to_python3_with_it_warns() -> None:
    out = py("python3", **TORCH_21) + py("python", packages={}) + SMI + DF + RPC + HF
    p = checks(out)["python"]
    assert p.status == "warn" and "`python` 3.10.12 has no torch" in p.finding and "python3 -u" in p.remedy


def test_no_torch_anywhere_fails_with_an_install_for_the_driver() -> None:
    found = checks(py("python3") + "@@py|python|\n" + SMI + DF + RPC + HF)
    assert found["python"].status == "fail" and found["torch"].status == "fail"
    assert found["python"].command == (
        "python3 -m pip install --upgrade torch==2.5.1 --index-url https://download.pytorch.org/whl/cu124"
    )
    assert found["cuda"].status == "skip"


def test_a_torch_built_for_a_newer_cuda_than_the_driver() -> None:
    warning = "CUDA initialization: The NVIDIA driver on your system is too old (found version 12040)."
    found = checks(healthy(torch_import="2.9.1", torch_cuda="12.8", cuda=False, gpus=[], warnings=[warning]))
    c = found["cuda"]
    assert c.status == "fail" and "built for CUDA 12.8" in c.finding and "CUDA 12.4 at most" in c.finding
    assert c.command == (
        "python3 -m pip install --upgrade torch==2.5.1 torchvision==0.20.1 "
        "--index-url https://download.pytorch.org/whl/cu124"
    )


def test_a_cpu_build_and_a_torch_that_will_not_import() -> None:
    assert checks(healthy(torch_import="2.5.1+cpu", torch_cuda=None, cuda=False))["torch"].status == "fail"
    broken = {"torch": "2.5.1", "torch_error": "ImportError: libcudnn.so.9: cannot open shared object file"}
    t = checks(py("python3", **broken) + SMI + DF + RPC + HF)["torch"]
    assert t.status == "fail" and "libcudnn" in t.finding and t.command


def test_no_nvidia_smi_or_a_failing_one() -> None:
    no_smi = healthy().replace(SMI, "@@smirc|missing\n")
    assert checks(no_smi)["gpu"].status == "fail"
    failing = healthy().replace(
        SMI, "@@smirc|9\n@@smi|NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n"
    )
    g = checks(failing)["gpu"]
    assert g.status == "fail" and "couldn't communicate" in g.finding


@pytest.mark.parametrize(
    ("line", "status"),
    [
        ("/dev/sdb 52428800 10485760 41943040 20% /workspace", "pass"),
        ("/dev/sdb 52428800 46137344 6291456 88% /workspace", "warn"),
        ("/dev/sdb 52428800 51380224 1048576 98% /workspace", "fail"),
    ],
)
def test_disk_thresholds(line: str, status: str) -> None:
    assert checks(healthy().replace(DF, f"@@dfrc|0\n@@df|{line}\n"))["disk"].status == status


def test_no_volume_is_a_warning() -> None:
    out = healthy().replace(DF, "@@dfrc|1\n@@df|df: /workspace: No such file or directory\n")
    d = checks(out)["disk"]
    assert d.status == "warn" and "no volume at /workspace" in d.finding


@pytest.mark.parametrize(
    ("lines", "status", "words"),
    [
        ("@@rpc|runpodctl v1.14.15\n", "pass", "v1 dialect"),
        ("@@rpc|runpodctl v2.7.2\n", "pass", "v2 dialect"),
        ("@@rpcmissing|\n", "warn", "not installed"),
        ("@@rpc|segmentation fault\n", "warn", "segmentation fault"),
    ],
)
def test_runpodctl(lines: str, status: str, words: str) -> None:
    r = checks(healthy().replace(RPC, lines))["runpodctl"]
    assert r.status == status and words in r.finding


@pytest.mark.parametrize(
    ("lines", "status"),
    [
        ("@@hfrc|0|hf auth whoami\n@@hf|user: alice\n", "pass"),
        ("@@hfrc|1|hf auth whoami\n@@hf|Not logged in\n", "warn"),
        ("@@hfrc|1|hf auth whoami\n@@hf|401 Client Error: Unauthorized. Invalid credentials\n", "fail"),
        ("@@hfrc|missing|\n", "warn"),
        ("@@hfrc|124|hf auth whoami\n", "warn"),
    ],
)
def test_hugging_face_login(lines: str, status: str) -> None:
    h = checks(healthy().replace(HF, lines))["hf"]
    assert h.status == status
    if status == "warn" and "Not logged" in lines:
        assert "--token" in h.remedy  # tells the person not to put the token on the command line


@pytest.mark.parametrize(
    "output",
    [
        "",
        "garbage\x00\xff bytes\n@@@|||\n@@pyprobe|python3|{not json\n@@smi|,,,\n@@df|a b c d e\n",
        healthy()[: len(healthy()) // 2],  # cut off mid-way: a dropped connection
        '@@pyprobe|python3|[1, 2]\n@@pyprobe|python3|{"gpus": [[1]], "cuda": "yes", "warnings": 5}\n',
    ],
)
def test_garbage_or_truncated_output_gives_verdicts_not_crashes(output: str) -> None:
    report = diagnose(parse_probe(output))
    assert len(report.checks) == 8 and report.worst in ("warn", "fail")


def test_the_probe_prints_no_secrets_and_quotes_the_volume() -> None:
    script = probe_script("/work space/it's")
    assert "'/work space/it'\"'\"'s'" in script
    assert "$HF_TOKEN" not in script.replace("${HF_TOKEN:-}", "")  # only tested for being set, never printed


def test_wheel_choice() -> None:
    assert cuda_tag("11.8") == "cu118" and cuda_tag("12.4.1") == "cu124" and cuda_tag("cpu") is None
    assert best_tag_for_driver("12.4") == "cu124" and best_tag_for_driver("12.9") == "cu128"
    assert best_tag_for_driver("11.4") == "cu118" and best_tag_for_driver(None) == "cu118"
    assert vision_for("2.5.1") == "0.20.1" and vision_for("2.7.1") == "0.22.1"
    assert install_command("python", "cu126", False) == (
        "python -m pip install --upgrade torch==2.7.1 --index-url https://download.pytorch.org/whl/cu126"
    )


def test_a_workspace_folder_on_the_container_disk_is_not_a_volume() -> None:
    # RunPod's images make /workspace; without a volume df answers for the overlay root
    d = checks(healthy().replace(DF, "@@dfrc|0\n@@df|overlay 52428800 10485760 41943040 20% /\n"))["disk"]
    assert d.status == "warn" and "no volume at /workspace" in d.finding


def test_a_cuda_line_without_a_new_enough_torch_moves_to_one_the_driver_runs() -> None:
    # runpod/pytorch 2.0.x images are cu117: download.pytorch.org has no torch 2.4 there
    t = checks(healthy(transformers="5.0.0", torch="2.0.1+cu117", torch_import="2.0.1+cu117", torch_cuda="11.7"))[
        "transformers"
    ]
    assert t.status == "fail" and t.command.endswith("/whl/cu124") and "which the driver runs" in t.remedy


def test_torchaudio_is_upgraded_with_torch() -> None:
    t = checks(healthy(transformers="5.9.0", torchaudio="2.1.0+cu118"))["transformers"]
    assert t.command == (
        "python3 -m pip install --upgrade torch==2.5.1 torchvision==0.20.1 torchaudio==2.5.1 "
        "--index-url https://download.pytorch.org/whl/cu118"
    )


def test_hf_whoami_in_colour_gives_the_user() -> None:
    out = healthy().replace(HF, "@@hfrc|0|hf auth whoami\n@@hf|\x1b[32m✓ Logged in\x1b[0m\n@@hf|  user: alice\n")
    assert checks(out)["hf"].finding == "logged in as alice"


def test_only_python_with_torch_and_no_python3_passes() -> None:
    p = checks("@@py|python3|\n" + py("python", **TORCH_21) + SMI + DF + RPC + HF)["python"]
    assert p.status == "pass"


def test_a_cpu_build_on_a_cpu_pod_is_a_warning_without_a_gpu_install() -> None:
    out = healthy(torch_import="2.5.1+cpu", torch_cuda=None, cuda=False).replace(SMI, "@@smirc|missing\n")
    t = checks(out)["torch"]
    assert t.status == "warn" and not t.command


def test_a_probe_cut_short_marks_the_rest_as_not_answered() -> None:
    cut = healthy().split("@@dfrc")[0]  # python and GPU answered; the pod hung at df
    report = diagnose(parse_probe(cut), timed_out=True)
    by = {c.id: c for c in report.checks}
    assert by["torch"].status == "pass" and by["gpu"].status == "pass"
    assert {by[k].finding for k in ("disk", "runpodctl", "hf")} == {"the pod stopped answering before this check"}
