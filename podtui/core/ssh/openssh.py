"""OpenSSH's own `ssh` to a pod, with podtui's key and podtui's pinned host key (docs/ssh-out.md).

One set of options serves the command line (`podtui ssh`, the TUI's key) and podtui's ssh config file
(ssh_config.py): `-o Name=value` on the command line and `Name value` in the file are read by the same parser.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path

from podtui.core import profiles, secret
from podtui.core.pod import Pod
from podtui.core.ssh.connect import Connection, Endpoint, SshSettings, Via, connect_pod, endpoints_for
from podtui.core.ssh.errors import SshError, SshKeyError
from podtui.core.ssh.keys import candidate_paths

SSH = "ssh"
# What OpenSSH's config parser and destination syntax take as they are: a host name or an IP address (v4 or v6),
# a user name, a pin name. Anything else from the API is refused, never quoted (docs/architecture.md#text-from-outside).
_HOST = re.compile(r"[A-Za-z0-9][A-Za-z0-9.:-]{0,252}")
_USER = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,63}")
_PIN = re.compile(r"[A-Za-z0-9:._\[\]-]{1,300}")
# a path ssh's word splitting leaves as it is; anything else goes in double quotes (it takes ' as a quote too)
_PLAIN_PATH = re.compile(r"[A-Za-z0-9/._+,:@%-]+")
# commands that move data (transfers, rsync): -F none reads no ssh_config (podtui's options are all there is), -T no
# terminal, -x -a no X11 or agent forwarding, BatchMode no prompt (a passphrase or an unknown key fails at once),
# LogLevel=ERROR no warnings mixed with what the pod says
BATCH_OPTIONS = (
    *("-F", "none", "-T", "-x", "-a"),
    *("-o", "BatchMode=yes", "-o", "ClearAllForwardings=yes", "-o", "LogLevel=ERROR"),
)
RSYNC_HOST = "podtui-pod"  # rsync's remote is RSYNC_HOST:PATH; rsync_shell's HostName says where it really is
# AES-GCM first for bulk data: with the AES instructions of today's processors it outruns ChaCha20, ssh's own first
# choice (paramiko is told the same in connect.py; bench/bulk_transfer.py measures both)
_BULK_CIPHERS = (
    "aes128-gcm@openssh.com",
    "aes256-gcm@openssh.com",
    "chacha20-poly1305@openssh.com",
    "aes128-ctr",
    "aes192-ctr",
    "aes256-ctr",
)


def ssh_argv(pod: Pod, settings: SshSettings, via: Via = "auto", *, check: bool = True) -> list[str]:
    """The argv that runs OpenSSH's `ssh` into `pod`: an interactive shell (direct SSH when the pod has it, the
    gateway's PTY otherwise, or as `via` says). Over direct SSH a command may be appended; the gateway takes none.

    check=True (blocking I/O: a TCP connection and an SSH handshake, up to settings.connect_timeout_s per route)
    first connects once with podtui's own client, which pins the host key on first use, trusts a restarted pod's
    new key and refuses a changed one (hostkeys.py), proves a key is accepted (with podtui's advice when none is)
    and, in "auto", falls back to the gateway when direct SSH does not answer; the argv then names the route and
    the key that worked. check=False builds it from the API's data alone: ssh then refuses a host key podtui has
    not pinned. Raises SshError (its subclasses say what went wrong) or SshKeyError."""
    if shutil.which(SSH) is None:
        raise SshError("OpenSSH's `ssh` is not installed (or not on PATH); `podtui exec` works without it")
    if not check:
        return endpoint_argv(endpoints_for(pod, settings, via)[0], settings, identity_files(settings))
    connection = connect_pod(pod, settings, via)
    try:
        return connection_argv(connection, settings)
    finally:
        connection.close()


def connection_argv(connection: Connection, settings: SshSettings) -> list[str]:
    """The argv for the route and the key podtui's own `connection` (just made: the host key checked and pinned)
    used; an ssh-agent key has no file to name: ssh then asks the agent as it always does."""
    used = Path(connection.key_path).expanduser().absolute()
    return endpoint_argv(connection.endpoint, settings, [p for p in identity_files(settings) if p == used])


def batch_argv(connection: Connection, settings: SshSettings, command: str) -> list[str]:
    """`ssh ... user@host COMMAND` for a command that moves data over direct SSH: no prompt of any kind, no
    terminal, no forwarding, and no ssh_config but podtui's options, so a user's RemoteCommand, ControlMaster or
    LocalForward cannot change what runs or where (docs/bulk-transfers.md#batch-commands)."""
    if connection.endpoint.mode != "direct":
        raise SshError(f"{connection.endpoint.label}: the gateway runs no commands; this needs direct SSH")
    if command.startswith("-"):
        raise SshError("a remote command may not start with '-' (ssh would take it for an option)")
    return [SSH, *BATCH_OPTIONS, *bulk_cipher_options(), *connection_argv(connection, settings)[1:], command]


@functools.cache
def bulk_cipher_options() -> tuple[str, ...]:
    """`-o Ciphers=...` with AES-GCM first, of the ciphers this ssh has (`ssh -Q cipher`: a build without one, such
    as a FIPS build without ChaCha20, would refuse a list naming it); none when it has no AES-GCM."""
    try:
        known = subprocess.run(
            [SSH, "-Q", "cipher"], capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL
        ).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return ()
    ciphers = [c for c in _BULK_CIPHERS if c in known]
    return ("-o", "Ciphers=" + ",".join(ciphers)) if ciphers[:1] == [_BULK_CIPHERS[0]] else ()


def rsync_shell(pod: Pod, settings: SshSettings, *, check: bool = True) -> str:
    """rsync's `-e` value that reaches `pod` over direct SSH with podtui's key and pinned host key, for a remote
    written `RSYNC_HOST:PATH` (HostName in it names the pod's real address; docs/bulk-transfers.md#rsync). Each
    word is quoted as rsync splits `-e` (at spaces; '...' or "..." keep spaces, a doubled quote is a literal one;
    no backslash escapes). check: as for ssh_argv (blocking I/O). Raises SshError (the pod has no direct SSH, or
    its data cannot be given to ssh safely) or SshKeyError. Run rsync with env=ssh_env()."""
    if shutil.which(SSH) is None:
        raise SshError("OpenSSH's `ssh` is not installed (or not on PATH)")
    if check:
        connection = connect_pod(pod, settings, "direct")
        try:
            argv = connection_argv(connection, settings)
        finally:
            connection.close()
    else:
        argv = endpoint_argv(endpoints_for(pod, settings, "direct")[0], settings, identity_files(settings))
    *options_, destination = argv[1:]
    user, _, host = destination.rpartition("@")
    words = [SSH, *BATCH_OPTIONS, *bulk_cipher_options(), *options_, "-o", f"HostName={host}", "-l", user]
    return " ".join(rsync_word(w) for w in words)


def rsync_word(word: str) -> str:
    """One word of rsync's `-e` value: as it is when it holds no space or quote, else in '...' with ' doubled."""
    if word and not any(c in word for c in " '\""):
        return word
    return "'" + word.replace("'", "''") + "'"


def endpoint_argv(endpoint: Endpoint, settings: SshSettings, identities: list[Path]) -> list[str]:
    """`ssh [-t] -i KEY -o ... -p PORT user@host` for one endpoint; no I/O but reading the keys' modes."""
    argv = [SSH]
    if endpoint.mode == "gateway":
        argv.append("-t")  # the gateway gives a PTY shell and nothing else (docs/runpod-facts.md#ssh-gateway)
    for key in identities:
        check_key_mode(key)
        # ssh checks that -i's file exists before it expands %-tokens in the name: a name holding a % goes as
        # IdentityFile, escaped as in the config file
        argv += ["-i", expandable(key)] if "%" not in str(key) else ["-o", f"IdentityFile={config_path(key)}"]
    for name, value in options(endpoint, settings, bool(identities)):
        argv += ["-o", f"{name}={value}"]
    argv += ["-p", str(endpoint.port), f"{checked_user(endpoint.username)}@{checked_host(endpoint.host)}"]
    return argv


def options(endpoint: Endpoint, settings: SshSettings, identities_only: bool) -> list[tuple[str, str]]:
    """The options both the command line and the config file give ssh, values already in ssh_config syntax."""
    out = [("IdentitiesOnly", "yes")] if identities_only else []
    return [
        *out,
        # podtui's own known-hosts file, looked up under podtui's pin name rather than host:port: RunPod reuses
        # addresses across pods, so a direct pod's key is pinned to the pod (docs/runpod-facts.md#ssh-direct)
        ("UserKnownHostsFile", config_path(settings.known_hosts)),
        ("HostKeyAlias", checked_pin(endpoint.pin)),
        ("StrictHostKeyChecking", "yes"),  # a key podtui has not pinned is refused, never added
        ("GlobalKnownHostsFile", "/dev/null"),  # podtui's pin is the only key trusted
        ("UpdateHostKeys", "no"),  # ssh never writes podtui's file
        ("CheckHostIP", "no"),  # nor looks the address up: the address is not what is pinned
        ("ConnectTimeout", str(max(1, round(settings.connect_timeout_s)))),
        ("ServerAliveInterval", str(settings.keepalive_s)),
    ]


def identity_files(settings: SshSettings) -> list[Path]:
    """The key files podtui would try, in its order (the test's or demo's keys, the configured key, the dedicated
    one, then ~/.ssh's usual ones unless not wanted), those that exist."""
    paths = [k.path for k in settings.extra_keys] + candidate_paths(settings.key_path, settings.search_home)
    return [p for p in dict.fromkeys(p.expanduser().absolute() for p in paths) if p.is_file()]


def check_key_mode(path: Path) -> None:
    """OpenSSH ignores a private key others can read (its "UNPROTECTED PRIVATE KEY FILE"): say so before it does."""
    try:
        mode = path.stat().st_mode & 0o777
    except OSError as e:
        raise SshKeyError(f"cannot read SSH key {path}: {e.strerror}") from None
    if mode & 0o077:
        raise SshKeyError(f"OpenSSH refuses {path}: others can read it (mode {mode:o}); run `chmod 600 {path}`")


def expandable(path: Path) -> str:
    """A path as ssh reads a key or known-hosts file name: it expands %-tokens and ${VARS} there, so a % is
    doubled; `${` (which has no escape) and control characters are refused."""
    text = str(path)
    if "${" in text or any(ord(c) < 32 or c == "\x7f" for c in text):
        raise SshError(f"OpenSSH cannot be given the path {text!r} safely: move the file")
    return text.replace("%", "%%")


def config_path(path: Path) -> str:
    """A path as one value of an ssh_config option (or of -o): expandable, in double quotes unless it is plain
    characters only (ssh splits words at spaces, and takes ' and " as quotes and a backslash as an escape)."""
    text = expandable(path)
    if '"' in text:
        raise SshError(f"OpenSSH cannot be given the path {text!r} safely: move the file")
    return config_word(text)


def config_word(text: str) -> str:
    """`text` (no `"` in it) as one word of an ssh_config line: as it is when plain, else in double quotes, its
    backslashes doubled."""
    return text if _PLAIN_PATH.fullmatch(text) else '"' + text.replace("\\", "\\\\") + '"'


def checked_host(host: str) -> str:
    if not _HOST.fullmatch(host):
        raise SshError(f"RunPod gave an SSH host podtui will not pass to ssh: {host!r}")
    return host


def checked_user(user: str) -> str:
    if not _USER.fullmatch(user):
        raise SshError(f"RunPod gave an SSH user name podtui will not pass to ssh: {user!r}")
    return user


def checked_pin(pin: str) -> str:
    # pin names are percent-encoded (hostkeys.py): a % would be read by ssh as one of its tokens
    if not _PIN.fullmatch(pin):
        raise SshError(f"the pod's id or gateway makes a host key name ssh cannot look up: {pin!r}")
    return pin


def ssh_env(environ: Mapping[str, str] | None = None, key_envs: Iterable[str] = ()) -> dict[str, str]:
    """The environment for ssh or an editor: the user's, without RunPod's API key, every profile's key variable
    (`key_envs`, and those of every config.toml this process read: another profile's key is not read to be known)
    or any value holding a secret podtui knows (a SendEnv in someone's ssh config must not carry it to a pod;
    docs/profiles.md#key-isolation)."""
    environ = os.environ if environ is None else environ
    dropped = {"RUNPOD_API_KEY", *key_envs, *profiles.key_env_names()}
    return {k: v for k, v in environ.items() if k not in dropped and secret.redact(v) == v}
