"""One shell script that gathers everything the doctor judges, and the reading of its output.

The script prints only tagged lines (`@@tag|...`), so a banner, a noisy .bashrc or a program's own chatter
cannot be mistaken for an answer; anything malformed is read as "no answer" for that check, never a crash.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from typing import Any

PYTHONS = ("python3", "python")

# Runs under any Python 3 on the pod. Package versions come from metadata (no import of transformers, which
# takes seconds); torch is imported, because only torch itself can say whether CUDA works.
_PY_PROBE = """
import json, warnings
r = {}
try:
    from importlib import metadata
    for n in ("torch", "torchvision", "torchaudio", "transformers", "accelerate", "peft", "trl", "huggingface_hub"):
        try:
            r[n] = metadata.version(n)
        except Exception:
            pass
except Exception:
    pass
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        import torch
        r["torch_import"] = str(torch.__version__)
        r["torch_cuda"] = getattr(torch.version, "cuda", None)
        r["cuda"] = bool(torch.cuda.is_available())
        if r["cuda"]:
            r["gpus"] = [[str(torch.cuda.get_device_name(i)), int(torch.cuda.get_device_properties(i).total_memory)]
                         for i in range(torch.cuda.device_count())]
    except Exception as e:
        r["torch_error"] = (type(e).__name__ + ": " + str(e))[:300]
r["warnings"] = [str(w.message)[:400] for w in caught][:5]
print("PODTUI-PROBE " + json.dumps(r))
"""


def probe_script(volume: str = "/workspace") -> str:
    py = shlex.quote(_PY_PROBE)
    return f"""vol={shlex.quote(volume)}
for py in {" ".join(PYTHONS)}; do
  p=$(command -v "$py" 2>/dev/null) || {{ echo "@@py|$py|"; continue; }}
  echo "@@py|$py|$p"
  "$py" --version 2>&1 | head -n 1 | sed "s/^/@@pyver|$py|/"
  timeout 60 "$py" -c {py} 2>/dev/null | grep '^PODTUI-PROBE ' | sed "s/^PODTUI-PROBE /@@pyprobe|$py|/"
done
if command -v nvidia-smi >/dev/null 2>&1; then
  out=$(timeout 15 nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version \\
        --format=csv,noheader,nounits 2>&1); echo "@@smirc|$?"
  printf '%s\\n' "$out" | head -n 16 | sed 's/^/@@smi|/'
  timeout 15 nvidia-smi 2>/dev/null | grep -o 'CUDA Version: [0-9.]*' | head -n 1 | sed 's/^CUDA Version: /@@smicuda|/'
else
  echo "@@smirc|missing"
fi
out=$(timeout 15 df -Pk -- "$vol" 2>&1); echo "@@dfrc|$?"; printf '%s\\n' "$out" | tail -n 1 | sed 's/^/@@df|/'
if command -v runpodctl >/dev/null 2>&1; then
  timeout 10 runpodctl version 2>&1 | head -n 3 | sed 's/^/@@rpc|/'
else
  echo "@@rpcmissing|"
fi
if command -v hf >/dev/null 2>&1; then hfc="hf auth whoami"
elif command -v huggingface-cli >/dev/null 2>&1; then hfc="huggingface-cli whoami"
else hfc=; fi
if [ -n "$hfc" ]; then
  out=$(timeout 15 $hfc 2>&1); echo "@@hfrc|$?|$hfc"; printf '%s\\n' "$out" | tail -n 5 | sed 's/^/@@hf|/'
else
  echo "@@hfrc|missing|"
fi
[ -n "${{HF_TOKEN:-}}" ] && echo "@@hftoken|the HF_TOKEN variable"
[ -s "${{HF_TOKEN_PATH:-${{HF_HOME:-$HOME/.cache/huggingface}}/token}}" ] && echo "@@hftoken|a token file"
true"""


@dataclass
class PythonReadings:
    command: str
    path: str | None = None  # None: no such command
    version: str | None = None  # "3.10.12"
    packages: dict[str, str] = field(default_factory=dict)
    torch_import: str | None = None  # the version torch reports once imported
    torch_cuda: str | None = None  # the CUDA it was built for; None for a CPU build
    cuda: bool | None = None
    gpus: list[tuple[str, int]] = field(default_factory=list)
    torch_error: str | None = None
    warnings: list[str] = field(default_factory=list)
    probed: bool = False  # the probe printed its line (a Python that crashed or hung did not)

    @property
    def has_torch(self) -> bool:
        return self.torch_import is not None


@dataclass
class PodReadings:
    pythons: dict[str, PythonReadings]
    smi: str | None = None  # "0" or an exit status, "missing" when there is no nvidia-smi
    smi_rows: list[str] = field(default_factory=list)
    driver_cuda: str | None = None
    df_status: str | None = None
    df_line: str | None = None
    runpodctl: list[str] | None = None  # its version output; None when absent
    hf_status: str | None = None  # exit status of the whoami, "missing" without an HF CLI
    hf_command: str = ""
    hf_lines: list[str] = field(default_factory=list)
    hf_token_sources: list[str] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)  # the script's sections that answered (a timeout cuts it short)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _apply_probe(readings: PythonReadings, payload: str) -> None:
    try:
        r = json.loads(payload)
    except ValueError:
        return
    if not isinstance(r, dict):
        return
    readings.probed = True
    readings.packages = {
        k: v
        for k in ("torch", "torchvision", "torchaudio", "transformers", "accelerate", "peft", "trl", "huggingface_hub")
        if isinstance(v := r.get(k), str)
    }
    readings.torch_import, readings.torch_cuda = _str(r.get("torch_import")), _str(r.get("torch_cuda"))
    readings.cuda = r.get("cuda") if isinstance(r.get("cuda"), bool) else None
    gpus = r.get("gpus")
    if isinstance(gpus, list):
        readings.gpus = [
            (str(g[0]), int(g[1])) for g in gpus if isinstance(g, list) and len(g) == 2 and isinstance(g[1], int)
        ]
    readings.torch_error = _str(r.get("torch_error"))
    warnings = r.get("warnings")
    readings.warnings = [w for w in warnings if isinstance(w, str)] if isinstance(warnings, list) else []


def parse_probe(output: str) -> PodReadings:
    readings = PodReadings({c: PythonReadings(c) for c in PYTHONS})
    for raw in output.splitlines():
        if not raw.startswith("@@") or "|" not in raw:
            continue
        tag, _, rest = raw[2:].partition("|")
        readings.seen.add(tag)
        if tag in ("py", "pyver", "pyprobe"):
            command, _, value = rest.partition("|")
            py = readings.pythons.get(command)
            if py is None:
                continue
            if tag == "py":
                py.path = value or None
            elif tag == "pyver":
                py.version = value.removeprefix("Python ").strip() or None
            else:
                _apply_probe(py, value)
        elif tag == "smirc":
            readings.smi = rest
        elif tag == "smi":
            readings.smi_rows.append(rest)
        elif tag == "smicuda":
            readings.driver_cuda = rest.strip() or None
        elif tag == "dfrc":
            readings.df_status = rest
        elif tag == "df":
            readings.df_line = rest
        elif tag == "rpc":
            readings.runpodctl = [*(readings.runpodctl or []), rest]
        elif tag == "hfrc":
            readings.hf_status, _, readings.hf_command = rest.partition("|")
        elif tag == "hf":
            readings.hf_lines.append(rest)
        elif tag == "hftoken":
            readings.hf_token_sources.append(rest)
    return readings
