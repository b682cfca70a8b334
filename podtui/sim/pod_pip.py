"""pip on a simulated pod: installs the ML packages an image Python needs into its site folder, offline.

It knows the torch builds download.pytorch.org and PyPI serve (which CUDA builds each version has) and the
torch that transformers 5 requires, and it answers the way pip does: "Successfully installed ...", the
resolver's conflict warning, "No matching distribution found". Packages outside its catalogue are refused
with a plain note: nothing here reaches the internet.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

# version -> CUDA builds on download.pytorch.org/whl/cuXYZ; the first is PyPI's default wheel.
TORCH_BUILDS = {
    "2.1.0": ("cu121", "cu118"),
    "2.1.2": ("cu121", "cu118"),
    "2.2.2": ("cu121", "cu118"),
    "2.3.1": ("cu121", "cu118"),
    "2.4.0": ("cu121", "cu118", "cu124"),
    "2.4.1": ("cu121", "cu118", "cu124"),
    "2.5.1": ("cu124", "cu118", "cu121"),
    "2.6.0": ("cu124", "cu118", "cu126"),
    "2.7.1": ("cu126", "cu118", "cu128"),
    "2.8.0": ("cu128", "cu126", "cu129"),
    "2.9.1": ("cu128", "cu126", "cu130"),
}
# torchvision 0.(m+15).p goes with torch 2.m.p, from the same index
VISION = {f"0.{int(v.split('.')[1]) + 15}.{v.split('.')[2]}": v for v in TORCH_BUILDS}
CATALOGUE = {
    "torch": list(TORCH_BUILDS),
    "torchvision": list(VISION),
    "torchaudio": list(TORCH_BUILDS),
    "transformers": ["4.46.3", "4.57.1", "5.0.0", "5.9.0"],
    "trl": ["0.12.2", "0.24.0"],
    "peft": ["0.13.2", "0.17.1"],
    "accelerate": ["1.1.1", "1.10.1"],
    "datasets": ["3.1.0", "4.1.1"],
    "bitsandbytes": ["0.44.1", "0.48.1"],
}
TRANSFORMERS_5_NEEDS_TORCH = (2, 4)

TORCH_MODULE = '''"""torch {version} in a simulated RunPod image (podtui): versions, CUDA and the GPUs; no tensors."""
import json as _json
import warnings as _warnings
from pathlib import Path as _Path

__version__ = "{version}"


class _VersionInfo:
    cuda = {cuda!r}


version = _VersionInfo()
_machine = _json.loads((_Path(__file__).resolve().parents[2] / "machine.json").read_text())


def _as_tuple(text):
    return tuple(int(x) for x in text.split(".")[:2])


class _Props:
    def __init__(self, name, total_memory):
        self.name, self.total_memory = name, total_memory


class cuda:
    """torch.cuda: available when this build has CUDA, the pod has GPUs and the driver is new enough."""

    @staticmethod
    def is_available():
        if version.cuda is None or not _machine["gpu_count"]:
            return False
        if _as_tuple(version.cuda) > _as_tuple(_machine["driver_cuda"]):
            driver = "%d%02d0" % _as_tuple(_machine["driver_cuda"])
            _warnings.warn(
                "CUDA initialization: The NVIDIA driver on your system is too old (found version %s). Please "
                "update your GPU driver by downloading and installing a new version from the URL: "
                "http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to install a "
                "PyTorch version that has been compiled with your version of the CUDA driver." % driver)
            return False
        return True

    @staticmethod
    def device_count():
        return _machine["gpu_count"] if cuda.is_available() else 0

    @staticmethod
    def get_device_name(index=0):
        return _machine["gpu_name"]

    @staticmethod
    def get_device_properties(index=0):
        return _Props(_machine["gpu_name"], _machine["memory_bytes"])
'''

TRANSFORMERS_MODULE = '''"""transformers {version} in a simulated RunPod image (podtui)."""
import sys as _sys
from importlib import metadata as _metadata

__version__ = "{version}"
try:
    _torch = _metadata.version("torch").split("+")[0]
except _metadata.PackageNotFoundError:
    _torch = None
if _torch and int(__version__.split(".")[0]) >= 5 and tuple(int(x) for x in _torch.split(".")[:2]) < {need}:
    # what transformers prints when the torch it finds is too old, and then it runs without PyTorch
    print("Disabling PyTorch because PyTorch >= {need_text} is required but found %s" % _torch, file=_sys.stderr)
'''


def torch_cuda(build: str) -> str | None:
    """'cu118' -> '11.8'; 'cpu' -> None."""
    m = re.fullmatch(r"cu(\d+)(\d)", build)
    return f"{m.group(1)}.{m.group(2)}" if m else None


def write_package(site: Path, name: str, version: str) -> None:
    """Install `name` `version` (torch as '2.1.0+cu118', '2.1.0+cpu' or a plain PyPI '2.9.1') into `site`."""
    remove_package(site, name)
    module = site / name
    module.mkdir(parents=True)
    if name == "torch":
        base, _, build = version.partition("+")
        cuda = torch_cuda(build) if build else torch_cuda(TORCH_BUILDS.get(base, ("cu121",))[0])
        text = TORCH_MODULE.format(version=version, cuda=cuda)
    elif name == "transformers":
        need = TRANSFORMERS_5_NEEDS_TORCH
        text = TRANSFORMERS_MODULE.format(version=version, need=need, need_text=".".join(map(str, need)))
    else:
        text = f'"""{name} {version} in a simulated RunPod image (podtui)."""\n__version__ = "{version}"\n'
    (module / "__init__.py").write_text(text)
    info = site / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")


def remove_package(site: Path, name: str) -> str | None:
    old = installed(site).get(name)
    shutil.rmtree(site / name, ignore_errors=True)
    for info in site.glob(f"{name}-*.dist-info"):
        shutil.rmtree(info, ignore_errors=True)
    return old


def installed(site: Path) -> dict[str, str]:
    found = {}
    for info in sorted(site.glob("*.dist-info")):
        fields = dict(line.split(": ", 1) for line in (info / "METADATA").read_text().splitlines() if ": " in line)
        found[fields.get("Name", "")] = fields.get("Version", "")
    return found


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version.split("+")[0])[:3])


def _resolve(name: str, wanted: str | None, index: str | None) -> str:
    """The version pip would install, or the error it prints."""
    versions = CATALOGUE[name]
    if name in ("torch", "torchvision", "torchaudio") and index:
        build = index.rstrip("/").rsplit("/", 1)[-1]
        versions = [v for v in versions if build in TORCH_BUILDS[VISION.get(v, v)] or build == "cpu"]
    else:
        build = None
    candidates = [v for v in versions if wanted is None or v == wanted]
    if not candidates:
        shown = ", ".join(f"{v}+{build}" if build else v for v in versions) or "none"
        spec = f"{name}=={wanted}" if wanted else name
        return (
            f"ERROR: Could not find a version that satisfies the requirement {spec} (from versions: {shown})\n"
            f"ERROR: No matching distribution found for {spec}\n"
        )
    best = max(candidates, key=_key)
    return f"{best}+{build}" if build else best


def _conflicts(site: Path) -> list[str]:
    have = installed(site)
    torch, transformers = have.get("torch"), have.get("transformers")
    if torch and transformers and _key(transformers)[0] >= 5 and _key(torch)[:2] < TRANSFORMERS_5_NEEDS_TORCH:
        need = ".".join(map(str, TRANSFORMERS_5_NEEDS_TORCH))
        return [
            f"transformers {transformers} requires torch>={need}, but you have torch {torch} which is incompatible."
        ]
    return []


def install(site: Path, specs: list[str], upgrade: bool, index: str | None) -> int:
    out = sys.stdout.write
    if index:
        out(f"Looking in indexes: {index}\n")
    plan: list[tuple[str, str]] = []
    for spec in specs:
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*(?:==\s*([0-9][0-9A-Za-z.+]*))?", spec)
        if not m:
            sys.stderr.write(f"ERROR: Invalid requirement: '{spec}'\n")
            return 1
        name, wanted = m.group(1).lower(), m.group(2)
        if name not in CATALOGUE:
            sys.stderr.write(
                f"ERROR: {name} is not available on this simulated pod: podtui's simulator has no "
                f"internet, its pip knows only {', '.join(CATALOGUE)}\n"
            )
            return 1
        out(f"Collecting {spec}\n")
        have = installed(site).get(name)
        if have and wanted is None and not upgrade:
            out(f"Requirement already satisfied: {name} in {site} ({have})\n")
            continue
        version = _resolve(name, wanted, index)
        if version.startswith("ERROR"):
            sys.stderr.write(version)
            return 1
        if have == version:
            out(f"Requirement already satisfied: {name}=={version} in {site} ({have})\n")
            continue
        out(f"  Downloading {name}-{version}-py3-none-any.whl\n")
        plan.append((name, version))
    if plan:
        out(f"Installing collected packages: {', '.join(n for n, _ in plan)}\n")
        for name, version in plan:
            old = remove_package(site, name)
            if old:
                out(
                    f"  Attempting uninstall: {name}\n    Found existing installation: {name} {old}\n"
                    f"    Uninstalling {name}-{old}:\n      Successfully uninstalled {name}-{old}\n"
                )
            write_package(site, name, version)
        conflicts = _conflicts(site)
        if conflicts:
            sys.stderr.write(
                "ERROR: pip's dependency resolver does not currently take into account all the "
                "packages that are installed. This behaviour is the source of the following "
                "dependency conflicts.\n" + "".join(c + "\n" for c in conflicts)
            )
        out("Successfully installed " + " ".join(f"{n}-{v}" for n, v in plan) + "\n")
    return 0


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="pip", add_help=False)
    p.add_argument("--site", type=Path, required=True)
    p.add_argument("--python", required=True)
    p.add_argument("--version", action="store_true")
    p.add_argument("command", nargs="?")
    own, rest = p.parse_known_args(argv)
    if own.version or own.command is None:
        print(f"pip 24.0 from {own.site} (python {own.python.rsplit('.', 1)[0]})")
        return 0
    if own.command == "install":
        q = argparse.ArgumentParser(prog="pip install", add_help=False)
        q.add_argument("-U", "--upgrade", action="store_true")
        q.add_argument("-i", "--index-url")
        q.add_argument("--extra-index-url")
        q.add_argument("-q", "--quiet", action="count")
        q.add_argument("--no-cache-dir", action="store_true")
        q.add_argument("specs", nargs="+")
        args = q.parse_args(rest)
        return install(own.site, args.specs, args.upgrade, args.index_url)
    have = installed(own.site)
    if own.command in ("list", "freeze"):
        fmt = "{}=={}" if own.command == "freeze" else "{:<20} {}"
        if own.command == "list":
            print(fmt.format("Package", "Version") + "\n" + "-" * 20 + " " + "-" * 12)
        for name, version in have.items():
            print(fmt.format(name, version))
        return 0
    if own.command == "show":
        missing = [n for n in rest if n.lower() not in have]
        for n in rest:
            if n.lower() in have:
                print(f"Name: {n.lower()}\nVersion: {have[n.lower()]}\nLocation: {own.site}")
        if missing:
            sys.stderr.write(f"WARNING: Package(s) not found: {', '.join(missing)}\n")
            return 1
        return 0
    if own.command == "uninstall":
        for n in (a for a in rest if not a.startswith("-")):
            old = remove_package(own.site, n.lower())
            print(f"  Successfully uninstalled {n}-{old}" if old else f"WARNING: Skipping {n} as it is not installed.")
        return 0
    sys.stderr.write(f'ERROR: unknown command "{own.command}"\n')
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
