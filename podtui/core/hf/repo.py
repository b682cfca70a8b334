"""A Hub repo as podtui sees it: a validated id, its type, and its files with sizes and the checksums the Hub
publishes (sha256 for LFS files, the git blob sha1 for the rest), so a download can be verified file by file."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Literal

RepoType = Literal["model", "dataset"]
REPO_TYPES: tuple[RepoType, ...] = ("model", "dataset")
DEFAULT_ENDPOINT = "https://huggingface.co"
# huggingface_hub's validate_repo_id: [namespace/]name of letters, digits, - _ . ; at most 96 characters
_REPO_ID = re.compile(r"^(?:[\w\-.]+/)?[\w\-.]+$", re.ASCII)  # the Hub takes ASCII names only
DEFAULT_BANDWIDTH = 50e6  # bytes/s: a conservative figure for a RunPod datacenter pulling from the Hub's CDN


def endpoint_from_env() -> str:
    """The Hub podtui talks to: HF_ENDPOINT (a mirror, a local Hub) when set, huggingface.co otherwise. Read when
    asked, so a change of the variable counts."""
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


class BadRepoId(ValueError):
    """The text cannot be a Hub repo id; the message says what a good one looks like."""


def validate_repo_id(text: str) -> str:
    return parse_repo(text)[0]


def parse_repo(text: str) -> tuple[str, RepoType | None]:
    """(repo id, the type a pasted URL names: https://huggingface.co/datasets/o/n and hf://datasets/o/n are
    datasets, a model's URL is a model; None for a bare id)."""
    repo_id = text.strip()
    kind: RepoType | None = None
    for prefix in ("https://huggingface.co/", "http://huggingface.co/", "hf://"):
        if repo_id.startswith(prefix):  # a pasted URL is meant as its repo
            repo_id = repo_id[len(prefix) :].strip("/")
            first = repo_id.split("/", 1)[0]
            if first in ("datasets", "spaces"):
                if first == "spaces":
                    raise BadRepoId(f"{text.strip()!r} is a Space: podtui checks and downloads models and datasets")
                kind, repo_id = "dataset", repo_id.split("/", 1)[1] if "/" in repo_id else ""
            else:
                kind = "model"
            repo_id = "/".join(repo_id.split("/")[:2])
            break
    example = "owner/name, e.g. meta-llama/Llama-3.2-1B"
    if not repo_id:
        raise BadRepoId(f"which repo? give its id: {example}")
    if repo_id.count("/") > 1:
        raise BadRepoId(f"{repo_id!r} has more than one /: a repo id is {example}")
    if not _REPO_ID.match(repo_id) or "--" in repo_id or ".." in repo_id:
        raise BadRepoId(f"{repo_id!r} is not a repo id: letters, digits, - _ and . only, as {example}")
    if (
        len(repo_id) > 96
        or repo_id.endswith(".git")
        or any(p.startswith(("-", ".")) or p.endswith(("-", ".")) for p in repo_id.split("/"))
    ):
        raise BadRepoId(
            f"{repo_id!r} is not a repo id: parts cannot start or end with - or ., nor end in .git, "
            "and the whole is at most 96 characters"
        )
    return repo_id, kind


def repo_url(repo_id: str, repo_type: RepoType = "model", endpoint: str = DEFAULT_ENDPOINT) -> str:
    """The repo's page, where a gated repo's license is accepted."""
    return f"{endpoint.rstrip('/')}/{'datasets/' if repo_type == 'dataset' else ''}{repo_id}"


@dataclass(frozen=True)
class RepoFile:
    path: str
    size: int
    sha256: str | None = None  # LFS files
    blob_id: str | None = None  # git blob sha1: the checksum of a file kept in git itself

    @property
    def expected(self) -> tuple[str, str] | None:
        """(algorithm, digest) that proves this file arrived whole, or None if the Hub gave neither."""
        if self.sha256:
            return "sha256", self.sha256
        if self.blob_id:
            return "git-sha1", self.blob_id
        return None

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "size": self.size, "sha256": self.sha256, "blob_id": self.blob_id}

    @classmethod
    def from_json(cls, data: Any) -> RepoFile:
        if not isinstance(data, dict) or not isinstance(data.get("path"), str) or not isinstance(data.get("size"), int):
            raise ValueError("a file needs a path and a size")
        sha, blob = data.get("sha256"), data.get("blob_id")
        return cls(
            data["path"], data["size"], sha if isinstance(sha, str) else None, blob if isinstance(blob, str) else None
        )


def download_seconds(total_bytes: int, bandwidth_bytes_per_s: float = DEFAULT_BANDWIDTH) -> float:
    return total_bytes / bandwidth_bytes_per_s if bandwidth_bytes_per_s > 0 else float("inf")
