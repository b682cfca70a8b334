"""The layers import only downwards: core < console < ui < sim < cli. The core never imports textual.
No two modules import each other, directly or through others, inside a package or across packages.

The domain core is two packages: podtui.core and podtui.transfer (a public path: scripts import transfers from it).
Every import counts, lazy (inside a function) and type-only ones too: each is a dependency of the design."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from itertools import pairwise
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


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")


MODULES = {_module_name(f): f for f in PACKAGE.rglob("*.py")}
PACKAGES = sorted(m for m, f in MODULES.items() if f.name == "__init__.py" and m != "podtui")


def _module_imports(name: str) -> Iterator[tuple[str, int]]:
    """The podtui modules `name` imports, with the line of each import. `from package import module` names the
    module; the package's own __init__, which Python runs first, is not counted (no module chooses that)."""
    path = MODULES[name]
    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the package `level - 1` steps above this module's
                base = ".".join(here[: len(here) - node.level + 1] + ([base] if base else []))
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        else:
            continue
        yield from ((t, node.lineno) for t in targets if t in MODULES and t != name)


IMPORTS = {m: dict(_module_imports(m)) for m in MODULES}  # module -> {imported module: line}


def _cycles(modules: set[str]) -> list[set[str]]:
    """The groups of `modules` that import each other, through imports among `modules` (Tarjan's strongly
    connected components of more than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in IMPORTS[v]:
            if w not in modules:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = {stack.pop()}
            while v not in group:
                group.add(stack.pop())
            if len(group) > 1:
                groups.append(group)

    for m in sorted(modules):
        if m not in index:
            visit(m)
    return groups


def _path_around(group: set[str]) -> list[str]:
    """A shortest cycle through the group's first module (breadth first, staying inside the group)."""
    start = min(group)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(IMPORTS[v]):
                if w == start:  # back at the start: walk the way we came
                    path = [v]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if w in group and w not in came_from:
                    came_from[w] = v
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"no cycle through {start}")  # a strongly connected group always has one


def _describe(groups: list[set[str]]) -> str:
    """Each group as one cycle, import by import (module (line of the import) -> ...), and the rest of the group."""
    lines = ["import cycles:"]
    for group in groups:
        cycle = _path_around(group)
        steps = [f"{a} (line {IMPORTS[a][b]})" for a, b in pairwise(cycle)]
        lines.append(" -> ".join([*steps, cycle[-1]]))
        if len(group) > len(cycle) - 1:
            lines.append(f"  tied into the same cycle: {', '.join(sorted(group - set(cycle)))}")
    return "\n".join(lines)


def _inside(package: str) -> set[str]:
    return {m for m in MODULES if m == package or m.startswith(package + ".")}


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle_inside_package(package: str) -> None:
    """Inside each package and its subpackages (podtui.core.doctor, podtui.core, podtui.transfer, ...)."""
    cycles = _cycles(_inside(package))
    assert not cycles, _describe(cycles)


def test_no_import_cycle_between_packages() -> None:
    """A cycle that leaves its top-level package (podtui.core <-> podtui.transfer, the only two that may import
    each other's modules under the layers); cycles inside one package are the test above's."""
    top = {m: m.split(".")[1] if "." in m else m for m in MODULES}
    cycles = [c for c in _cycles(set(MODULES)) if len({top[m] for m in c}) > 1]
    assert not cycles, _describe(cycles)


# podtui/transfer's own layers (its package docstring): a module imports only modules of the lines below its own,
# never a sibling on its line; the routes never know each other or anything above them.
TRANSFER_LAYERS = [
    ["sync.watch"],
    ["sync.run"],
    ["sync.rsync_route", "sync.sftp_route", "sync.console_route"],
    ["sync.pod_end", "sync.local_end", "sync.state"],
    ["sync.remote_scan", "sync.plan"],
    ["sync.pod_batch", "sync.scan"],
    ["sync.ignore", "sync.ops", "sync.route"],
    ["sync", "sync.tree"],
    ["queue"],
    ["history"],
    ["runners"],
    ["push", "pull", "hf_download"],
    ["files"],
    ["runner", "manifest"],
    ["routes", "routes.sftp", "routes.openssh", "routes.runpodctl", "routes.console"],
    ["progress", "archive", "owner"],
    ["job"],
    ["checksum", "part", "modes", "leftovers", "source", "runpodctl_output"],
]


def test_transfer_modules_import_only_lines_below() -> None:
    level = {f"podtui.transfer.{m}": i for i, line in enumerate(TRANSFER_LAYERS) for m in line}
    inside = _inside("podtui.transfer") - {"podtui.transfer"}
    assert inside == set(level), f"place these in TRANSFER_LAYERS: {sorted(inside ^ set(level))}"
    package = "podtui.transfer.routes"  # the routes' package file, on their line, holds nothing of theirs
    bad = [
        f"{m} (line {line}) imports {t}"
        for m in sorted(inside)
        for t, line in IMPORTS[m].items()
        if t in level and level[t] <= level[m] and package not in (m, t)
    ]
    assert not bad, "\n".join(bad)


def test_cycle_finder_names_a_cycle() -> None:
    """The guard itself: a cycle made of real modules is found and named in import order."""
    a, b = "podtui.core.doctor.checks", "podtui.core.doctor.probe"
    saved = dict(IMPORTS[b])
    IMPORTS[b][a] = 1
    try:
        assert _cycles({a, b}) == [{a, b}]
        assert _describe([{a, b}]) == f"import cycles:\n{a} (line {IMPORTS[a][b]}) -> {b} (line 1) -> {a}"
    finally:
        IMPORTS[b] = saved


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
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in modules)
        + ("bad = [m for m in sys.modules if m == 'textual' or m.startswith('textual.')]\nprint(','.join(bad))\n")
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


@pytest.mark.parametrize("heavy", ["runpod", "paramiko", "graphql", "httpx"])
def test_first_frame_path_does_not_import(heavy: str) -> None:
    # the SDK, SSH, the REST client and the simulator's GraphQL load in workers after the first frame, never before it
    code = (
        "import sys\nimport podtui.ui.app, podtui.cli.main, podtui.cli.session\n"
        f"print(any(m == {heavy!r} or m.startswith({heavy!r} + '.') for m in sys.modules))\n"
    )
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
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**env, "PODTUI_SDK_FULL_IMPORT": "0"},
    )
    assert out.stdout.split() == ["True", "False", "0"]


def test_light_sdk_load_leaves_import_runpod_working(tmp_path: Path) -> None:
    """A script using podtui as a library can still import the whole SDK afterwards."""
    code = "from podtui.core.api import sdk\ns = sdk.load()\nimport runpod\nprint(s.light, callable(runpod.get_pods))\n"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split() == ["True", "True"]
