"""Code cites the repository's own docs, by section, and nothing a newcomer cannot open.

A comment or docstring may point at `docs/runpod-facts.md#ssh-gateway` (or README.md#benchmarks); every such
section must exist. It never points at notes or articles kept outside the repository, or at an issue by number:
a newcomer has none of them to follow. Text shown to users is not checked here."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

import podtui

ROOT = Path(podtui.__file__).parent.parent
CITATION = re.compile(r"\b((?:docs/[\w-]+|README)\.md)#([\w-]+)")
OUTSIDE = re.compile(r"\(facts\b|\bfacts file\b|^\W*facts:|field guide|\bissue #?\d", re.IGNORECASE | re.MULTILINE)
PLACES = [
    *(f"podtui/{p.name}" for p in sorted((ROOT / "podtui").iterdir()) if (p / "__init__.py").exists()),
    "tests",
    "bench",
    "scripts",
]


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (not - or _), spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(doc: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", doc.read_text(encoding="utf-8"), flags=re.MULTILINE | re.DOTALL)
    return {_slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", text, flags=re.MULTILINE)}


def _commentary(path: Path) -> Iterator[tuple[int, str]]:
    """(line, text) of every comment and docstring in a Python file."""
    source = path.read_text(encoding="utf-8")
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                yield first.lineno, first.value.value


def _files(place: str) -> list[Path]:
    return sorted(p for p in (ROOT / place).rglob("*.py") if "__pycache__" not in p.parts)


def _outside_citations(place: str) -> list[str]:
    return [
        f"{f.relative_to(ROOT)}:{line}: {m.group(0)!r}"
        for f in _files(place)
        for line, text in _commentary(f)
        for m in OUTSIDE.finditer(text)
    ]


def test_every_cited_section_exists() -> None:
    anchors: dict[str, set[str]] = {}
    missing = []
    for place in PLACES:
        for f in _files(place):
            for line, text in _commentary(f):
                for doc, anchor in CITATION.findall(text):
                    if doc not in anchors:
                        anchors[doc] = _anchors(ROOT / doc) if (ROOT / doc).is_file() else set()
                    if anchor not in anchors[doc]:
                        missing.append(f"{f.relative_to(ROOT)}:{line}: {doc}#{anchor}")
    assert not missing, "cited sections that do not exist:\n" + "\n".join(missing)


def test_links_between_docs_resolve() -> None:
    """docs/*.md and README.md: every link to a section, in the same file or another, lands on a heading."""
    broken = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target, anchor in re.findall(r"\]\(([\w./-]*\.md)?#([\w-]+)\)", doc.read_text(encoding="utf-8")):
            linked = (doc.parent / target) if target else doc
            if not linked.is_file() or anchor not in _anchors(linked):
                broken.append(f"{doc.relative_to(ROOT)}: {target}#{anchor}")
    assert not broken, "links to sections that do not exist:\n" + "\n".join(broken)


@pytest.mark.parametrize("place", PLACES)
def test_no_citation_of_what_is_not_in_the_repository(place: str) -> None:
    found = _outside_citations(place)
    assert not found, "cite docs/*.md#section instead:\n" + "\n".join(found)


def test_slugs_are_githubs() -> None:
    assert _slug("SSH, `podtui exec` and `run_remote`") == "ssh-podtui-exec-and-run_remote"
    assert _slug("Pricing and the balance") == "pricing-and-the-balance"
    assert _slug("REST v2") == "rest-v2"
