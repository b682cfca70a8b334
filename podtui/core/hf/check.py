"""`check_repo`: before any pod time is spent, can this token download this repo, and what does it hold?

Uses huggingface_hub's HfApi with its `endpoint` argument (HF_ENDPOINT is read by the library at import, so podtui
never relies on it). Every call passes the token explicitly, or False: the library would otherwise pick up
whatever token this machine has, and the check would not be checking what it says.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from podtui.core import floors, secret, units
from podtui.core.hf.gate import SETTINGS_URL, classify, remedy
from podtui.core.hf.repo import (
    DEFAULT_BANDWIDTH,
    DEFAULT_ENDPOINT,
    RepoFile,
    RepoType,
    parse_repo,
    repo_url,
)
from podtui.core.hf.report import HubReport
from podtui.core.hf.token import FoundToken, found, token_file

if TYPE_CHECKING:
    from huggingface_hub import HfApi

log = logging.getLogger(__name__)
_NETWORK_ERRORS = {
    "ConnectError",
    "ConnectTimeout",
    "ReadTimeout",
    "TimeoutException",
    "NetworkError",
    "TransportError",
    "ConnectionError",
    "Timeout",
    "ProxyError",
    "RemoteProtocolError",
    "ReadError",
    "OfflineModeIsEnabled",
}


class HubUnusable(Exception):
    """The Hub could not be asked (unreachable, or it answered with something that is not the Hub's JSON)."""


def _is_network_error(e: BaseException) -> bool:
    return isinstance(e, OSError) or any(c.__name__ in _NETWORK_ERRORS for c in type(e).__mro__)


def _http(e: BaseException) -> tuple[int | None, str | None, str | None]:
    """(status, X-Error-Code, X-Error-Message) of a huggingface_hub HTTP error, if it is one."""
    response = getattr(e, "response", None)
    if response is None:
        return None, None, None
    headers = getattr(response, "headers", {}) or {}
    message = headers.get("X-Error-Message") or getattr(e, "server_message", None)
    return getattr(response, "status_code", None), headers.get("X-Error-Code"), message


def check_repo(
    repo_id: str,
    token: FoundToken | str | None,
    endpoint: str = DEFAULT_ENDPOINT,
    repo_type: RepoType = "model",
    bandwidth_bytes_per_s: float = DEFAULT_BANDWIDTH,
    timeout_s: float = 15.0,
) -> HubReport:
    """Raises BadRepoId for text that cannot be a repo id; every other problem is a line in the report."""
    repo_id, named = parse_repo(repo_id)
    repo_type = named or repo_type  # a pasted dataset URL is a dataset whatever --repo-type says
    if isinstance(token, str):
        token = found(token, "given")
    floors.require("huggingface_hub")  # an older one lacks what the checks below rely on
    from huggingface_hub import HfApi  # a second or so to import: never on the way to the first frame

    report = HubReport(repo_id, repo_type, endpoint.rstrip("/"), bandwidth_bytes_per_s=bandwidth_bytes_per_s)
    api = HfApi(endpoint=report.endpoint)
    try:
        usable = _check_token(api, report, token)
        info = _check_repo(api, report, usable, timeout_s)
        if info is not None:
            _check_access(api, report, usable)
            _check_files(api, report, info, usable, timeout_s)
    except HubUnusable as e:
        report.add(
            "fail",
            str(e),
            f"check this machine's connection; the Hub is {report.endpoint} (huggingface.co "
            "unless HF_ENDPOINT or --endpoint says otherwise)",
        )
    return report


def _unusable(report: HubReport, e: BaseException) -> HubUnusable:
    if _is_network_error(e):
        return HubUnusable(
            f"cannot reach the Hub at {report.endpoint}: {type(e).__name__}: {secret.redact(str(e))[:160]}"
        )
    return HubUnusable(
        f"the Hub at {report.endpoint} answered with something that is not the Hub's JSON (a proxy, "
        f"a captive portal or a wrong endpoint?): {secret.redact(str(e))[:120]}"
    )


def _check_token(api: HfApi, report: HubReport, token: FoundToken | None) -> str | bool:
    """The token to use from here on, or False (anonymous) when there is none or the Hub refused it."""
    from huggingface_hub.errors import HfHubHTTPError

    if token is None:
        report.add(
            "warn",
            f"no Hugging Face token found (looked at HF_TOKEN, HUGGING_FACE_HUB_TOKEN and {token_file()})",
            f"public repos need none; for a gated one make a read token at {SETTINGS_URL}"
            ", then `hf auth login` or set HF_TOKEN",
            SETTINGS_URL,
        )
        return False
    report.token_source, report.token_masked = token.source, token.masked
    try:
        who: Any = api.whoami(token=token.value)
    except HfHubHTTPError as e:
        status, _, message = _http(e)
        if status == 401:
            report.token_valid = False
            report.add(
                "fail",
                f"the token from {token.source} ({token.masked}) is invalid or revoked",
                f"make a new read token at {SETTINGS_URL}, then `hf auth login` or set HF_TOKEN",
                SETTINGS_URL,
            )
            return False
        raise HubUnusable(f"the Hub could not check the token: {status} {secret.redact(message or '')}") from None
    except (ValueError, KeyError) as e:
        raise _unusable(report, e) from None
    except Exception as e:
        if _is_network_error(e):
            raise _unusable(report, e) from None
        raise
    if not isinstance(who, dict):
        raise HubUnusable(f"the Hub at {report.endpoint} answered whoami with something that is not an object")
    access = ((who.get("auth") or {}).get("accessToken") or {}) if isinstance(who.get("auth"), dict) else {}
    report.token_valid, report.user = True, str(who.get("name") or "?")
    report.token_role = str(access.get("role") or "") or None
    fine = access.get("fineGrained") if isinstance(access.get("fineGrained"), dict) else None
    if report.token_role == "fineGrained" and fine is not None:
        report.can_read_gated = bool(fine.get("canReadGatedRepos"))
    role = {"fineGrained": "fine-grained"}.get(report.token_role or "", report.token_role or "unknown-role")
    report.add("pass", f"token valid: {report.user}, {role} token (from {token.source}, {token.masked})")
    return token.value


def _check_repo(api: HfApi, report: HubReport, token: str | bool, timeout_s: float) -> Any:
    from huggingface_hub.errors import GatedRepoError, HfHubHTTPError, RepositoryNotFoundError

    kind = "dataset" if report.repo_type == "dataset" else "model"
    info: Any
    try:
        if report.repo_type == "dataset":
            info = api.dataset_info(report.repo_id, files_metadata=True, token=token, timeout=timeout_s)
        else:
            info = api.model_info(report.repo_id, files_metadata=True, token=token, timeout=timeout_s)
    except GatedRepoError:  # a Hub that hides even the metadata of a gated repo: it exists, and it is gated
        report.exists, report.gated = True, "manual"
        return {}
    except RepositoryNotFoundError:
        report.exists = False
        page = repo_url(report.repo_id, report.repo_type, report.endpoint)
        other = "model" if kind == "dataset" else "dataset"
        report.add(
            "fail",
            f"no {kind} repo {report.repo_id} on the Hub (or it is private and "
            f"{'this token cannot see it' if token else 'no token was sent'})",
            f"check the spelling on {page}; for a {other} add --repo-type {other}",
            page,
        )
        return None
    except HfHubHTTPError as e:
        status, _, message = _http(e)
        raise HubUnusable(
            f"the Hub answered {status} for {report.repo_id}: {secret.redact(message or str(e))[:160]}; "
            "try again in a minute"
        ) from None
    except (ValueError, KeyError, TypeError) as e:
        raise _unusable(report, e) from None
    except Exception as e:
        if _is_network_error(e):
            raise _unusable(report, e) from None
        raise
    report.exists, report.sha = True, getattr(info, "sha", None)
    report.gated = getattr(info, "gated", None) or False
    report.add("pass", f"{kind} repo {report.repo_id} found" + (f" (commit {report.sha[:10]})" if report.sha else ""))
    return info


def _check_access(api: HfApi, report: HubReport, token: str | bool) -> None:
    from huggingface_hub.errors import HfHubHTTPError

    page = repo_url(report.repo_id, report.repo_type, report.endpoint)
    if not report.gated:
        report.access = "ok"
        report.add("pass", "not gated: anyone can download it")
        return
    if report.token_valid is False:  # asking anonymously would only say "a gated repo needs a token"
        report.add(
            "warn",
            f"gated ({report.gated}): access not checked, since the Hub refused the token",
            "fix the token (above), then check again",
            page,
        )
        return
    try:
        api.auth_check(report.repo_id, repo_type=report.repo_type, token=token)
    except HfHubHTTPError as e:
        status, code, message = _http(e)
        if status is not None and status >= 500:
            raise HubUnusable(f"the Hub answered {status} when asked about access; try again in a minute") from None
        report.access = classify(status, message, has_token=bool(token), can_read_gated=report.can_read_gated)
        what, todo, link = remedy(report.access, page, report.user)
        said = (
            f"; the Hub said {status}"
            + (f" {code}" if code else "")
            + (f": {secret.redact(message)[:200]}" if message else "")
        )
        report.add("fail", f"gated ({report.gated}): {what}{said}", todo, link)
        return
    except Exception as e:
        if _is_network_error(e):
            raise _unusable(report, e) from None
        raise
    report.access = "ok"
    report.add("pass", f"gated ({report.gated}), and {report.user or 'this token'} has access")


def _check_files(api: HfApi, report: HubReport, info: Any, token: str | bool, timeout_s: float) -> None:
    from huggingface_hub.hf_api import RepoFile as HubFile

    siblings = getattr(info, "siblings", None) or []
    files = [
        RepoFile(s.rfilename, int(s.size), s.lfs.sha256 if s.lfs else None, getattr(s, "blob_id", None))
        for s in siblings
        if s.size is not None
    ]
    if not files or len(files) < len(siblings):  # sizes missing: the tree listing has them
        try:
            tree = api.list_repo_tree(
                report.repo_id, recursive=True, repo_type=report.repo_type, revision=report.sha, token=token
            )
            files = [
                RepoFile(t.path, int(t.size), t.lfs.sha256 if t.lfs else None, t.blob_id)
                for t in tree
                if isinstance(t, HubFile)
            ]
        except Exception as e:
            log.warning("listing %s failed: %s", report.repo_id, secret.redact(str(e)))
            report.add(
                "warn",
                "the Hub did not list the repo's files, so the size is unknown",
                "the download still works; its progress shows no total",
            )
            return
    report.files = sorted(files, key=lambda f: f.path)
    if not report.files:
        report.add("warn", "the repo has no files")
        return
    eta = report.eta_s
    took = "?" if eta is None else "under a second" if eta < 1 else "about " + units.duration(eta)
    report.add(
        "pass",
        f"{len(report.files)} files, {units.size(report.total_bytes)}: {took} at "
        f"{units.size(report.bandwidth_bytes_per_s)}/s (assumed; --bandwidth to change)",
    )
