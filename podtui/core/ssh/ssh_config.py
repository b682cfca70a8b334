"""podtui's ssh config file: one `Host` block per pod, for OpenSSH and the editors (docs/ssh-out.md#the-config-file).

The file is podtui's own (in its config folder, 0600, replaced atomically and only when its text changes). The
user's ~/.ssh/config is touched once, with their consent, to add one `Include` line at its top
(docs/ssh-out.md#the-include-line); nothing else of theirs is ever written.
"""

from __future__ import annotations

import glob
import os
import re
import shlex
import stat
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from podtui.core.paths import Paths
from podtui.core.pod import Pod
from podtui.core.secret import replace_file, write_private
from podtui.core.ssh.connect import Endpoint, Mode, SshSettings, endpoints_for
from podtui.core.ssh.errors import SshError, SshKeyError
from podtui.core.ssh.openssh import (
    check_key_mode,
    checked_host,
    checked_user,
    config_path,
    config_word,
    identity_files,
    options,
)
from podtui.core.user_files import NotAFile, read_user_file
from podtui.core.visible import visible

CONFIG_NAME = "ssh_config"
USER_CONFIG = Path("~/.ssh/config")
ALIAS_PREFIX = "runpod-"
_ALIAS_LEN = 40  # of the name part: long enough to tell pods apart, short enough to type

HEADER = """\
# podtui's SSH hosts: one block per pod. Written by `podtui ssh-config --write` and rewritten by podtui when a
# pod's address changes: edits here are lost. ~/.ssh/config reads it through one `Include` line at its top.
#
# Host keys are podtui's pins (UserKnownHostsFile, HostKeyAlias; StrictHostKeyChecking yes): ssh refuses a host
# whose key podtui has not pinned, and a key that changed. A pod's key is pinned the first time podtui connects
# to it (`podtui ssh POD`, or `podtui ssh-config --write --pin`).
#
# A pod with direct SSH (a public IP and 22/tcp) takes commands, scp, sftp, port forwarding, VS Code and Cursor.
# A pod reachable only through RunPod's gateway gets a block for an interactive shell, which is all the gateway
# gives: no commands, scp, sftp or port forwarding, so editors cannot use it.
"""


@dataclass(frozen=True)
class HostBlock:
    alias: str
    pod_id: str
    mode: Mode


@dataclass(frozen=True)
class SshConfig:
    text: str
    hosts: dict[str, HostBlock]  # pod id -> its block (pods with SSH now)


def config_file(paths: Paths) -> Path:
    """Where podtui keeps its ssh config: its own config folder (a profile's own folder under it for a profile other
    than the default one: each profile's pods have their own Host blocks, docs/profiles.md#what-each-profile-keeps)."""
    return paths.account_config_dir / CONFIG_NAME


def _alias_part(text: str) -> str:
    # Pod names come from outside (docs/architecture.md#text-from-outside): only letters, digits, '.', '_' and
    # '-' survive, so no whitespace, pattern character (* ? !) or line break reaches a Host line.
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9._-]+", "-", ascii_text).strip("-._")[:_ALIAS_LEN].strip("-._")


def aliases(pods: Iterable[Pod]) -> dict[str, str]:
    """pod id -> `runpod-<name>`, unique. Of pods whose names come out the same, the oldest (createdAt, then id)
    keeps the plain alias and the others get their id added: a second pod of the same name never takes the alias
    the first one had."""
    by_id = {p.id: p for p in pods}
    base = {pid: _alias_part(p.name) or _alias_part(pid) or "pod" for pid, p in by_id.items()}
    oldest_first = sorted(by_id.values(), key=lambda p: (p.created_at is None, p.created_at or 0.0, p.id))
    plain: dict[str, str] = {}  # base -> the pod that has it plain
    for p in oldest_first:
        plain.setdefault(base[p.id], p.id)
    out: dict[str, str] = {}
    used: set[str] = set()
    # plain aliases first, so that one never gives way to an id-suffixed one that happens to spell the same
    order = [*plain.values(), *(p.id for p in oldest_first if plain[base[p.id]] != p.id)]
    for pid in order:
        b = base[pid]
        name = b if plain[b] == pid else f"{b}-{_alias_part(pid)}".strip("-")
        alias, n = ALIAS_PREFIX + name, 2
        while alias in used:  # only names made to collide get here
            alias, n = f"{ALIAS_PREFIX}{name}-{n}", n + 1
        used.add(alias)
        out[pid] = alias
    return out


def _pinned(known_hosts: Path) -> set[str]:
    """The names podtui's known-hosts file holds a key for."""
    try:
        text = read_user_file(known_hosts).decode("utf-8", errors="replace")
    except (OSError, NotAFile):
        return set()
    return {
        n for line in text.splitlines() if line.strip() and not line.startswith("#") for n in line.split()[0].split(",")
    }


def _endpoint(pod: Pod, settings: SshSettings) -> Endpoint | None:
    try:
        return endpoints_for(pod, settings)[0]  # direct first when the pod has it
    except SshError:
        return None


def render(pods: Sequence[Pod], settings: SshSettings) -> SshConfig:
    """The file's text for `pods` (no I/O but reading the known-hosts file and the keys' modes)."""
    names = aliases(pods)
    keys = identity_files(settings)
    key_lines, key_notes = [], []
    for key in keys:
        try:
            check_key_mode(key)
        except SshKeyError as e:
            key_notes.append(f"# {visible(str(e))}")
        key_lines.append(f"    IdentityFile {config_path(key)}")
    if not keys:
        key_notes.append("# no key file found: ssh offers its own default keys and your ssh-agent's")
    pinned = _pinned(settings.known_hosts)
    blocks: list[str] = []
    hosts: dict[str, HostBlock] = {}
    for pod in sorted(pods, key=lambda p: names[p.id]):
        alias = names[pod.id]
        about = f"# {visible(pod.name)} ({visible(pod.id)})"
        endpoint = _endpoint(pod, settings)
        if endpoint is None:
            blocks.append(f"{about}: {visible(pod.state)}, no SSH now (no block)\n")
            continue
        try:
            host, user = checked_host(endpoint.host), checked_user(endpoint.username)
            opts = options(endpoint, settings, bool(keys))
        except SshError as e:
            blocks.append(f"{about}: no block: {visible(str(e))}\n")
            continue
        lines = [f"{about}: direct SSH" if endpoint.mode == "direct" else f"{about}: RunPod's gateway only, a shell"]
        if endpoint.pin not in pinned:
            lines.append("# no host key pinned yet: ssh refuses this host until podtui has connected to it once")
        lines += key_notes
        lines += [f"Host {alias}", f"    HostName {host}", f"    Port {endpoint.port}", f"    User {user}"]
        if endpoint.mode == "gateway":
            lines.append("    RequestTTY yes")
        lines += key_lines
        lines += [f"    {name} {value}" for name, value in opts]
        blocks.append("\n".join(lines) + "\n")
        hosts[pod.id] = HostBlock(alias, pod.id, endpoint.mode)
    return SshConfig("\n".join([HEADER, *blocks]), hosts)


def write_config(path: Path, text: str) -> bool:
    """Replace podtui's file with `text` (0600, atomically) unless it holds that already; True when written."""
    try:
        if read_user_file(path).decode("utf-8", errors="replace") == text:
            return False
    except FileNotFoundError:
        pass
    except NotAFile as e:
        raise SshError(str(e)) from None
    write_private(path, text)
    return True


def refresh_written(pods: Sequence[Pod], settings: SshSettings, path: Path) -> bool:
    """Rewrite podtui's file for `pods` when the user has written it once and a pod's address, port or name
    changed; True when rewritten. Never creates it. (Not for the demo: its pods are not the user's.)"""
    if not path.is_file():
        return False
    return write_config(path, render(pods, settings).text)


def include_line(ours: Path) -> str:
    text = str(ours.expanduser().absolute())
    # Include takes a glob pattern (a backslash escapes in it), and recent OpenSSH expands %-tokens and ${VAR} there
    # while older releases take them as they are: no spelling of a %, ${ or pattern character means the same file
    # to both, so such a path is refused
    bad = any(c in text for c in '*?["\\%') or "${" in text or any(ord(c) < 32 or c == "\x7f" for c in text)
    if bad:
        raise SshError(
            f"podtui's ssh config path {text!r} cannot be written in an Include line safely: OpenSSH would read "
            "another file"
        )
    return f"Include {config_word(text)}"


def _words(line: str) -> tuple[str, list[str]]:
    """ssh_config's `Keyword value...` or `Keyword=value...`, lower-cased keyword."""
    m = re.match(r"\s*([A-Za-z]+)\s*(?:=\s*|\s+)(.*)", line)
    if m is None:
        return line.strip().lower(), []
    # as ssh splits them: a # begins a comment at the start of a word only (`/a#b` is one path)
    lexer = shlex.shlex(m.group(2), posix=True)
    lexer.whitespace_split, lexer.commenters = True, ""
    try:
        words = list(lexer)
    except ValueError:
        words = m.group(2).split()
    cut = next((i for i, w in enumerate(words) if w.startswith("#")), len(words))
    return m.group(1).lower(), words[:cut]


def includes(user_config: Path, ours: Path) -> bool:
    """Whether `user_config` includes `ours` for every host: an Include before its first Host or Match line (one
    inside a block applies to that block only)."""
    try:
        text = read_user_file(user_config.expanduser()).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return False
    except NotAFile as e:
        raise SshError(str(e)) from None
    target = os.path.realpath(ours.expanduser())
    ssh_dir = user_config.expanduser().parent
    for line in text.splitlines():
        keyword, values = _words(line)
        if keyword in ("host", "match"):
            return False
        if keyword != "include":
            continue
        for value in values:
            pattern = str(Path(value).expanduser())
            pattern = pattern if os.path.isabs(pattern) else str(ssh_dir / pattern)
            if not any(c in pattern for c in "*?["):
                if os.path.realpath(pattern) == target:
                    return True
                continue
            # expanded as ssh does, by glob(3): a * or ? never crosses a / nor matches a leading dot
            if any(os.path.realpath(found) == target for found in glob.glob(pattern)):
                return True
    return False


def add_include(user_config: Path, ours: Path) -> bool:
    """Put `Include <ours>` at the top of the user's ssh config, the rest byte for byte as it was, its mode kept
    (a missing file is made 0600, in a 0700 ~/.ssh). False when it is there already. Only with the user's consent."""
    user_config = user_config.expanduser()
    target = Path(os.path.realpath(user_config))  # a symlink (a dotfiles repository) is followed, not replaced
    if includes(target, ours):
        return False
    line = (include_line(ours) + "\n").encode()
    try:
        st = target.stat()
    except FileNotFoundError:
        if not target.parent.exists():
            target.parent.mkdir(mode=0o700, parents=True)
            target.parent.chmod(0o700)
        replace_file(target, line, 0o600)
        return True
    if not stat.S_ISREG(st.st_mode):
        raise SshError(f"{target} is not a regular file: podtui leaves it alone")
    # OpenSSH applies an Include to every host only above the first Host block, so the line goes first
    replace_file(target, line + read_user_file(target), stat.S_IMODE(st.st_mode), st)
    return True
