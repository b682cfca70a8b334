"""What `hf check` found: pass / warn / fail lines, each with a remedy in plain words, and the repo's files."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from podtui.core.hf.gate import Access
from podtui.core.hf.repo import RepoFile, RepoType

Status = Literal["pass", "warn", "fail"]


@dataclass(frozen=True)
class CheckLine:
    status: Status
    title: str  # what was checked and what it found
    remedy: str = ""  # what to do about it (empty for a pass)
    link: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "title": self.title, "remedy": self.remedy, "link": self.link}


@dataclass
class HubReport:
    repo_id: str
    repo_type: RepoType
    endpoint: str
    token_source: str | None = None  # where the token came from, never the token
    token_masked: str | None = None
    user: str | None = None
    token_role: str | None = None  # read, write, fineGrained
    can_read_gated: bool | None = None
    token_valid: bool | None = None  # None: no token to check
    exists: bool | None = None
    gated: bool | str | None = None  # False, "auto", "manual"
    access: Access | None = None
    sha: str | None = None
    files: list[RepoFile] = field(default_factory=list)
    bandwidth_bytes_per_s: float = 0.0
    lines: list[CheckLine] = field(default_factory=list)

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)

    @property
    def eta_s(self) -> float | None:
        return self.total_bytes / self.bandwidth_bytes_per_s if self.files and self.bandwidth_bytes_per_s else None

    @property
    def ok(self) -> bool:
        """Nothing failed: a download can start."""
        return not any(line.status == "fail" for line in self.lines)

    def add(self, status: Status, title: str, remedy: str = "", link: str | None = None) -> None:
        self.lines.append(CheckLine(status, title, remedy, link))

    def to_json(self) -> dict[str, Any]:
        return {
            "repo_id": self.repo_id,
            "repo_type": self.repo_type,
            "endpoint": self.endpoint,
            "ok": self.ok,
            "token": {
                "source": self.token_source,
                "masked": self.token_masked,
                "valid": self.token_valid,
                "user": self.user,
                "role": self.token_role,
                "can_read_gated": self.can_read_gated,
            },
            "exists": self.exists,
            "gated": self.gated,
            "access": self.access,
            "sha": self.sha,
            "files": [f.to_json() for f in self.files],
            "total_bytes": self.total_bytes,
            "bandwidth_bytes_per_s": self.bandwidth_bytes_per_s,
            "eta_s": self.eta_s,
            "lines": [line.to_json() for line in self.lines],
        }


def default_dir(report: HubReport) -> str:
    """Where a repo lands on the pod unless the user says: models/NAME or datasets/NAME, relative, so under the
    pod's volume."""
    return f"{'datasets' if report.repo_type == 'dataset' else 'models'}/{report.repo_id.rsplit('/', 1)[-1]}"
