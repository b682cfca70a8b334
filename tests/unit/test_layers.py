"""The layers import only downwards: core < console < ui < sim < cli. The core never imports textual.

The domain core is two packages: podtui.core and podtui.transfer (which the issues name as a public path)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import podtui

PACKAGE = Path(podtui.__file__).parent
LAYERS = ["core", "console", "ui", "sim", "cli"]
CORE = ("core", "transfer")  # one layer: the domain core


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _layer_files(layer: str) -> list[Path]:
    packages = CORE if layer == "core" else (layer,)
    return sorted(f for p in packages if (PACKAGE / p).exists() for f in (PACKAGE / p).rglob("*.py"))


def _layer_of(package: str) -> str | None:
    return "core" if package in CORE else package if package in LAYERS else None


def test_every_package_belongs_to_a_layer() -> None:
    packages = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert {p for p in packages if _layer_of(p) is None} == set()


@pytest.mark.parametrize("layer", LAYERS)
def test_layer_imports_only_downwards(layer: str) -> None:
    allowed = set(LAYERS[: LAYERS.index(layer) + 1])
    bad = []
    for f in _layer_files(layer):
        for name in _imports(f):
            parts = name.split(".")
            target = _layer_of(parts[1]) if parts[0] == "podtui" and len(parts) > 1 else None
            if target is not None and target not in allowed:
                bad.append(f"{f.relative_to(PACKAGE)} imports {name}")
    assert not bad, "\n".join(bad)


def test_core_source_never_names_textual() -> None:
    offenders = [str(f) for f in _layer_files("core") if any(n.split(".")[0] == "textual" for n in _imports(f))]
    assert not offenders


def test_importing_all_of_core_loads_no_textual() -> None:
    modules = [
        ".".join(f.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
        for f in _layer_files("core")
    ]
    code = "import sys\n" + "".join(f"import {m}\n" for m in modules) + (
        "bad = [m for m in sys.modules if m == 'textual' or m.startswith('textual.')]\n"
        "print(','.join(bad))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


@pytest.mark.parametrize("heavy", ["runpod", "paramiko", "graphql"])
def test_first_frame_path_does_not_import(heavy: str) -> None:
    # the SDK, SSH and the simulator's GraphQL load in workers after the first frame, never before it
    code = ("import sys\nimport podtui.ui.app, podtui.cli.main, podtui.cli.session\n"
            f"print(any(m == {heavy!r} or m.startswith({heavy!r} + '.') for m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_sdk_loads_whole_when_asked(tmp_path: Path) -> None:
    """The fallback path (plain `import runpod`) works too, and keeps the root logger clean."""
    code = (
        "import logging, sys\n"
        "from podtui.core.api import sdk\n"
        "s = sdk.load()\n"
        "print(s.light, 'runpod.serverless' in sys.modules, len(logging.getLogger().handlers))\n"
    )
    env = {"PODTUI_SDK_FULL_IMPORT": "1", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split() == ["False", "True", "0"]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**env, "PODTUI_SDK_FULL_IMPORT": "0"})
    assert out.stdout.split() == ["True", "False", "0"]


def test_light_sdk_load_leaves_import_runpod_working(tmp_path: Path) -> None:
    """A script using podtui as a library can still import the whole SDK afterwards."""
    code = ("from podtui.core.api import sdk\n"
            "s = sdk.load()\n"
            "import runpod\n"
            "print(s.light, callable(runpod.get_pods))\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split() == ["True", "True"]
