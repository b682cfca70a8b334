"""A local stand-in for the Hugging Face Hub: the HTTP endpoints huggingface_hub (and so the pods' `hf download`)
calls, on 127.0.0.1, answering as huggingface.co does.

Endpoints: GET /api/whoami-v2; GET /api/{models,datasets}/REPO[/revision/REV] (with ?blobs=true, sizes and LFS
sha256 per file); GET .../tree/REV[/PATH]; POST .../paths-info/REV; GET .../auth-check; HEAD and GET
/[datasets/]REPO/resolve/REV/PATH with X-Repo-Commit, ETag, X-Linked-Etag and X-Linked-Size (LFS files),
Content-Length and Range.

Errors are shaped like the Hub's: the status, `X-Error-Code` (RepoNotFound, GatedRepo, EntryNotFound,
RevisionNotFound), `X-Error-Message` and a JSON body {"error": ...}. A gated repo's metadata and file list are
public (as on the Hub); its files and auth-check are not. Gated refusals follow the status rule people go by
(docs/runpod-facts.md#hugging-face-gated-repos): 401 when the license was not accepted, 403 when a fine-grained
token lacks "public gated repositories". With `real_license_reply` the license case answers as huggingface.co
does today for a logged-in user (403, "not in the authorized list"), so the classification is tested against
both.

Fault switches (attributes): `garbage_next` answers the next N API calls with an HTML page instead of JSON;
`drop_next` cuts the next N file downloads half-way; `corrupt` serves the named files with flipped bytes;
`rate_bytes_per_s` slows file bodies down.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from podtui.sim.hub_seed import HubFile, HubRepo, HubSeed, HubToken, default_seed

log = logging.getLogger(__name__)
INVALID_CREDENTIALS = "Invalid credentials in Authorization header"  # the Hub's message for an unknown token
_API = re.compile(r"^/api/(models|datasets)/(.+?)(?:/(tree|paths-info|revision|auth-check)(?:/(.*))?)?$")
_RESOLVE = re.compile(r"^/(?:(datasets)/)?(.+?)/resolve/([^/]+)/(.+)$")
_CHUNK = 16 * 1024


class HubError(Exception):
    def __init__(self, status: int, code: str | None, message: str, commit: str | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.commit = status, code, message, commit


class SimHub:
    def __init__(self, seed: HubSeed | None = None, host: str = "127.0.0.1", port: int = 0) -> None:
        self.seed = seed or default_seed()
        self.lock = threading.Lock()
        self.real_license_reply = False
        self.garbage_next = 0
        self.drop_next = 0
        self.corrupt: set[str] = set()  # file paths served damaged (same length, different bytes)
        self.rate_bytes_per_s: float | None = None
        self.requests: list[str] = []  # "METHOD path" of every request, for tests
        self.downloads: list[str] = []  # file paths whose body was sent (GET on resolve)
        self._httpd = ThreadingHTTPServer((host, port), self._handler_class())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def endpoint(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def token(self, kind: str = "read") -> str:
        """A seeded token's value: read, no_gated_scope, no_license."""
        return self.seed.tokens[kind].value

    def repo(self, repo_id: str, repo_type: str = "model") -> HubRepo:
        return self.seed.repos[f"{repo_type}:{repo_id}"]

    def start(self) -> SimHub:
        # a stop waits for the loop's next poll: socketserver's default half second, paid by every test
        serve = functools.partial(self._httpd.serve_forever, poll_interval=0.05)
        self._thread = threading.Thread(target=serve, name="sim-hub", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> SimHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- the Hub's rules ---------------------------------------------------------------------------------

    def caller(self, authorization: str | None) -> HubToken | None:
        """The token's owner, None for an anonymous call; raises 401 for a token the Hub does not know."""
        if not authorization:
            return None
        value = authorization.removeprefix("Bearer ").strip()
        token = next((t for t in self.seed.tokens.values() if t.value == value), None)
        if token is None:
            raise HubError(401, None, INVALID_CREDENTIALS)
        return token

    def find(self, kind: str, path: str, caller: HubToken | None) -> tuple[HubRepo, str]:
        """The repo a URL path starts with, and the rest of the path."""
        repo_type = "dataset" if kind.startswith("dataset") else "model"
        parts = path.split("/")
        for n in (2, 1):
            repo = self.seed.repos.get(f"{repo_type}:{'/'.join(parts[:n])}")
            if repo is not None:
                return repo, "/".join(parts[n:])
        # The Hub does not tell a missing repo from a private one: 401 when anonymous, 404 otherwise.
        raise HubError(401 if caller is None else 404, "RepoNotFound", "Repository not found")

    def gate(self, repo: HubRepo, caller: HubToken | None) -> None:
        if not repo.gated:
            return
        what = f"Access to {repo.repo_type} {repo.repo_id} is restricted"
        if caller is None:
            raise HubError(
                401,
                "GatedRepo",
                f"{what}. You must have access to it and be authenticated to access it. Please log in.",
            )
        if caller.role == "fineGrained" and not caller.can_read_gated:
            raise HubError(
                403,
                "GatedRepo",
                f"{what}. Please enable access to public gated repositories in your "
                "fine-grained token settings to view this repository.",
            )
        if repo.repo_id not in self.seed.accepted.get(caller.user, set()):
            if self.real_license_reply:
                raise HubError(
                    403,
                    "GatedRepo",
                    f"{what} and you are not in the authorized list. Visit "
                    f"https://huggingface.co/{repo.repo_id} to ask for access.",
                )
            raise HubError(401, "GatedRepo", f"{what}. You must have access to it and be authenticated to access it.")

    def revision(self, repo: HubRepo, rev: str) -> None:
        if unquote(rev) not in ("main", repo.sha):
            raise HubError(404, "RevisionNotFound", f"Invalid rev id: {unquote(rev)}")

    # --- answers -----------------------------------------------------------------------------------------

    def whoami(self, caller: HubToken | None) -> dict[str, Any]:
        if caller is None:
            raise HubError(401, None, INVALID_CREDENTIALS)
        access: dict[str, Any] = {
            "displayName": caller.name,
            "role": caller.role,
            "createdAt": "2026-08-01T09:00:00.000Z",
        }
        if caller.role == "fineGrained":
            access["fineGrained"] = {
                "canReadGatedRepos": caller.can_read_gated,
                "global": [],
                "scoped": [
                    {
                        "entity": {"_id": f"id-{caller.user}", "type": "user", "name": caller.user},
                        "permissions": ["repo.content.read"],
                    }
                ],
            }
        return {
            "type": "user",
            "id": f"id-{caller.user}",
            "name": caller.user,
            "fullname": caller.user.title(),
            "email": f"{caller.user}@example.com",
            "emailVerified": True,
            "isPro": False,
            "orgs": [],
            "auth": {"type": "access_token", "accessToken": access},
        }

    def info(self, repo: HubRepo, blobs: bool) -> dict[str, Any]:
        siblings: list[dict[str, Any]] = []
        for f in repo.files:
            entry: dict[str, Any] = {"rfilename": f.path}
            if blobs:
                entry.update(size=f.size, blobId=f.blob_id)
                if f.lfs:
                    entry["lfs"] = {"sha256": f.sha256, "size": f.size, "pointerSize": len(f.pointer)}
            siblings.append(entry)
        return {
            "_id": f"id-{repo.repo_id}",
            "id": repo.repo_id,
            "author": repo.repo_id.split("/")[0],
            "sha": repo.sha,
            "lastModified": "2026-08-01T09:00:00.000Z",
            "private": False,
            "gated": repo.gated,
            "disabled": False,
            "downloads": 42,
            "likes": 7,
            "tags": [],
            "siblings": siblings,
            "usedStorage": sum(f.size for f in repo.files),
            "createdAt": "2026-07-01T09:00:00.000Z",
        }

    @staticmethod
    def tree_entry(f: HubFile) -> dict[str, Any]:
        entry: dict[str, Any] = {"type": "file", "oid": f.blob_id, "size": f.size, "path": f.path}
        if f.lfs:
            entry["lfs"] = {"oid": f.sha256, "size": f.size, "pointerSize": len(f.pointer)}
        return entry

    def tree(self, repo: HubRepo, folder: str, recursive: bool) -> list[dict[str, Any]]:
        prefix = folder.strip("/") + "/" if folder.strip("/") else ""
        out: list[dict[str, Any]] = []
        folders: set[str] = set()
        for f in repo.files:
            if not f.path.startswith(prefix):
                continue
            rest = f.path[len(prefix) :]
            parts = rest.split("/")
            for i in range(1, len(parts) if recursive else min(2, len(parts))):
                folders.add(prefix + "/".join(parts[:i]))
            if recursive or len(parts) == 1:
                out.append(self.tree_entry(f))
        out += [{"type": "directory", "oid": "0" * 40, "size": 0, "path": d} for d in sorted(folders)]
        if prefix and not out:
            raise HubError(404, "EntryNotFound", f'{folder} does not exist on "main"', repo.sha)
        return out

    def content(self, repo: HubRepo, f: HubFile) -> bytes:
        if f.path in self.corrupt:
            return bytes(b ^ 0x5A for b in f.data)
        return f.data

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                log.debug("sim-hub: " + format, *args)

            def _send(
                self,
                status: int,
                body: bytes,
                headers: dict[str, str] | None = None,
                ctype: str = "application/json; charset=utf-8",
            ) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def _error(self, e: HubError) -> None:
                headers = {"X-Error-Message": e.message}
                if e.code:
                    headers["X-Error-Code"] = e.code
                if e.commit:
                    headers["X-Repo-Commit"] = e.commit
                self._send(e.status, json.dumps({"error": e.message}).encode(), headers)

            def _json(self, obj: object) -> None:
                with hub.lock:
                    garbage = hub.garbage_next > 0
                    hub.garbage_next -= 1 if garbage else 0
                if garbage:  # what a captive portal or a proxy's error page looks like to a JSON client
                    return self._send(200, b"<html><body><h1>502 Bad Gateway</h1></body></html>", ctype="text/html")
                self._send(200, json.dumps(obj).encode())

            def _route(self) -> None:
                url = urlsplit(self.path)
                with hub.lock:
                    hub.requests.append(f"{self.command} {url.path}")
                try:
                    caller = hub.caller(self.headers.get("Authorization"))
                    if url.path == "/api/whoami-v2":
                        return self._json(hub.whoami(caller))
                    api = _API.match(url.path)
                    if api:
                        return self._api(api, caller, parse_qs(url.query))
                    resolve = _RESOLVE.match(url.path)
                    if resolve and self.command in ("GET", "HEAD"):
                        return self._resolve(resolve, caller)
                    raise HubError(404, None, "Sorry, we can't find the page you are looking for.")
                except HubError as e:
                    self._error(e)

            def _api(self, m: re.Match[str], caller: HubToken | None, query: dict[str, list[str]]) -> None:
                kind, rest = m.group(1), m.group(2)
                repo, tail = hub.find(
                    kind,
                    rest + ("/" + m.group(3) if m.group(3) else "") + ("/" + m.group(4) if m.group(4) else ""),
                    caller,
                )
                verb, _, arg = tail.partition("/")
                if verb == "auth-check":
                    hub.gate(repo, caller)
                    return self._json({})
                if verb in ("", "revision"):
                    if verb:
                        hub.revision(repo, arg)
                    return self._json(hub.info(repo, query.get("blobs", ["false"])[0].lower() == "true"))
                rev, _, folder = arg.partition("/")
                hub.revision(repo, rev)
                if verb == "tree":
                    recursive = query.get("recursive", ["false"])[0].lower() == "true"
                    return self._json(hub.tree(repo, unquote(folder), recursive))
                if verb == "paths-info" and self.command == "POST":
                    length = int(self.headers.get("Content-Length") or 0)
                    form = parse_qs(self.rfile.read(length).decode() if length else "")
                    wanted = set(form.get("paths", []))
                    return self._json([hub.tree_entry(f) for f in repo.files if f.path in wanted])
                raise HubError(404, None, "Sorry, we can't find the page you are looking for.")

            def _resolve(self, m: re.Match[str], caller: HubToken | None) -> None:
                repo, _ = hub.find(m.group(1) or "models", m.group(2), caller)
                hub.gate(repo, caller)
                hub.revision(repo, m.group(3))
                f = repo.file(unquote(m.group(4)))
                if f is None:
                    raise HubError(404, "EntryNotFound", "Entry not found", repo.sha)
                headers = {
                    "X-Repo-Commit": repo.sha,
                    "Accept-Ranges": "bytes",
                    "ETag": f'"{f.sha256 if f.lfs else f.blob_id}"',
                }
                if f.lfs:  # the Hub's headers for a file kept in LFS (it would redirect to its CDN)
                    headers.update({"X-Linked-Etag": f'"{f.sha256}"', "X-Linked-Size": str(f.size)})
                body = hub.content(repo, f)
                start = _range_start(self.headers.get("Range"))
                status = 200
                if start:
                    if start >= len(body):
                        raise HubError(416, None, "Requested range not satisfiable")
                    headers["Content-Range"] = f"bytes {start}-{len(body) - 1}/{len(body)}"
                    body, status = body[start:], 206
                if self.command == "HEAD":
                    return self._send(status, body, headers, "application/octet-stream")
                self._stream(status, body, headers, f.path)

            def _stream(self, status: int, body: bytes, headers: dict[str, str], path: str) -> None:
                with hub.lock:
                    drop = hub.drop_next > 0
                    hub.drop_next -= 1 if drop else 0
                    rate = hub.rate_bytes_per_s
                    hub.downloads.append(path)
                self.send_response(status)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(body)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                cut = len(body) // 2 if drop else len(body)
                for i in range(0, cut, _CHUNK):
                    self.wfile.write(body[i : min(i + _CHUNK, cut)])
                    if rate:
                        time.sleep(_CHUNK / rate)
                if drop:  # the connection dies mid-body, as a flaky network does
                    self.wfile.flush()
                    with contextlib.suppress(OSError):
                        self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True

            def do_GET(self) -> None:
                self._route()

            def do_HEAD(self) -> None:
                self._route()

            def do_POST(self) -> None:
                self._route()

        return Handler


def _range_start(header: str | None) -> int:
    m = re.match(r"bytes=(\d+)-$", header or "")
    return int(m.group(1)) if m else 0
