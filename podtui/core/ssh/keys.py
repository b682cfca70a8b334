"""SSH keys: which ones podtui tries, and a dedicated ed25519 key for RunPod.

A key made for RunPod alone, rather than the one that also opens GitHub or other servers, can be replaced or
revoked without touching anything else. It is registered on the account, so every pod gets it when its container
starts; a key added to one pod only is lost with that pod (docs/runpod-facts.md#ssh-keys).
"""

from __future__ import annotations

import io
import os
import re
from dataclasses import dataclass
from pathlib import Path

import paramiko
from paramiko.pkey import PublicBlob, UnknownKeyType

from podtui.core import secret
from podtui.core.ssh.errors import SshKeyError
from podtui.core.user_files import NotAFile, read_user_file

DEDICATED_KEY = Path("~/.ssh/id_ed25519_runpod")  # the name RunPod users commonly give it
USUAL_KEYS = ("id_ed25519", "id_ecdsa", "id_rsa")
# A key type, its base64 body, and any comment on one line (the API call escapes everything itself).
_PUBKEY_LINE = re.compile(
    r"(ssh-ed25519|ssh-rsa|ssh-dss|ecdsa-sha2-nistp(?:256|384|521)"
    r"|sk-ssh-ed25519@openssh\.com|sk-ecdsa-sha2-nistp256@openssh\.com)"
    r" [A-Za-z0-9+/]+={0,3}( [^\n\r]{0,500})?"
)


@dataclass(frozen=True)
class KeyFile:
    path: Path
    key: paramiko.PKey

    @property
    def public_line(self) -> str:
        return f"{self.key.get_name()} {self.key.get_base64()}"

    @property
    def fingerprint(self) -> str:
        return self.key.fingerprint


def candidate_paths(configured: Path | None = None, search_home: bool = True) -> list[Path]:
    """The configured key, the dedicated podtui/RunPod key, then the usual ~/.ssh keys (unless not wanted)."""
    paths = []
    if configured is not None:
        paths.append(configured.expanduser())
    if not search_home:
        return paths
    paths.append(DEDICATED_KEY.expanduser())
    ssh = Path("~/.ssh").expanduser()
    paths += [ssh / name for name in USUAL_KEYS]
    return list(dict.fromkeys(paths))  # first occurrence wins


def _key_class(data: bytes, passphrase: str | None) -> type[paramiko.PKey]:
    """The paramiko class for the private key in `data`, found as paramiko's PKey.from_path finds it (from the
    parsed key's type), without its fallback hiding why an OpenSSH key failed (a wrong passphrase)."""
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed25519, rsa

    password = passphrase.encode() if passphrase is not None else None
    loaded: object
    try:
        if b"-----BEGIN OPENSSH PRIVATE KEY-----" in data:
            loaded = serialization.load_ssh_private_key(data, password)
        else:  # PEM, which paramiko tries when OpenSSH's own format fails
            loaded = serialization.load_pem_private_key(data, password)
    except TypeError:  # cryptography's word for encrypted without a passphrase, or one given for a clear key
        if password is None:
            raise paramiko.PasswordRequiredException("private key file is encrypted") from None
        return _key_class(data, None)  # paramiko ignores a passphrase a key does not need
    except UnsupportedAlgorithm:
        raise UnknownKeyType(key_bytes=data, key_type=None) from None
    classes: list[tuple[type, type[paramiko.PKey]]] = [
        (rsa.RSAPrivateKey, paramiko.RSAKey),
        (ed25519.Ed25519PrivateKey, paramiko.Ed25519Key),
        (ec.EllipticCurvePrivateKey, paramiko.ECDSAKey),
    ]
    dss = getattr(paramiko, "DSSKey", None)  # gone from paramiko 4
    if dss is not None:
        classes.append((dsa.DSAPrivateKey, dss))
    for kind, cls in classes:
        if isinstance(loaded, kind):
            return cls
    raise UnknownKeyType(key_bytes=data, key_type=loaded.__class__)


def load_key(path: Path, passphrase: str | None = None) -> KeyFile:
    """The key at `path`, and the certificate next to it if there is one.

    Each file is read once (refused unless it is a regular file) and parsed from memory: paramiko opening them
    again by name would hang on a FIFO swapped in after the check."""
    cert = Path(f"{path}-cert.pub")
    try:
        data = read_user_file(path)
        key = _key_class(data, passphrase).from_private_key(io.StringIO(data.decode()), password=passphrase)
        try:
            cert_bytes = read_user_file(cert)
        except FileNotFoundError:  # as paramiko: no certificate, the key alone
            return KeyFile(path, key)
        try:
            cert_text = cert_bytes.decode()
            # a Message, not the text: given a string, paramiko first asks whether it names a file
            key.load_certificate(paramiko.Message(PublicBlob.from_string(cert_text).key_blob))
        except ValueError as e:
            raise SshKeyError(f"cannot read SSH certificate {cert}: {e}") from None
        return KeyFile(path, key)
    except NotAFile as e:
        raise SshKeyError(str(e)) from None
    except paramiko.PasswordRequiredException:
        raise SshKeyError(f"{path} is protected by a passphrase; load it into ssh-agent or use another key") from None
    except UnknownKeyType:
        raise SshKeyError(f"cannot read SSH key {path}: a key type paramiko does not support") from None
    except (paramiko.SSHException, ValueError, OSError) as e:
        raise SshKeyError(f"cannot read SSH key {path}: {e}") from None


def read_public_key(path: Path) -> str:
    """The line in a .pub file; SshKeyError when it cannot be read or is not a regular file."""
    try:
        return read_user_file(path).decode("utf-8", errors="replace").strip()
    except NotAFile as e:
        raise SshKeyError(str(e)) from None
    except OSError as e:
        raise SshKeyError(f"cannot read {path}: {e.strerror}") from None


def available_keys(configured: Path | None = None, search_home: bool = True) -> tuple[list[KeyFile], list[str]]:
    """Keys that exist and load, and a note for each one that exists but does not."""
    keys, notes = [], []
    for path in candidate_paths(configured, search_home):
        if not path.exists():
            if configured is not None and path == configured.expanduser():
                notes.append(f"{path} does not exist")
            continue
        try:
            keys.append(load_key(path))
        except SshKeyError as e:
            notes.append(str(e))
    return keys, notes


def generate_dedicated_key(path: Path | None = None, comment: str | None = None) -> KeyFile:
    """Create an ed25519 key pair (private 0600, public 0644) unless one is already there."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    path = (path or DEDICATED_KEY).expanduser()
    if path.exists():
        return load_key(path)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    private = Ed25519PrivateKey.generate()
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption()
    ).decode()
    secret.write_private(path, pem)
    public = (
        private.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()
    )
    user = comment or f"runpod-{os.environ.get('USER', 'podtui')}"
    pub_path = path.with_name(path.name + ".pub")
    pub_path.write_text(f"{public} {user}\n", encoding="utf-8")
    pub_path.chmod(0o644)
    return load_key(path)


def valid_public_line(line: str) -> bool:
    return bool(_PUBKEY_LINE.fullmatch(line.strip()))


def merge_account_keys(existing: str | None, new_line: str) -> str | None:
    """The account's pubKey with `new_line` appended, or None when it is already there.

    RunPod keeps all account keys in one newline-separated string (docs/runpod-facts.md#ssh-keys); every key
    already there is kept, in order. A line that is not a public key stops the merge: podtui will not
    resend what it cannot read.
    """
    lines = [ln.strip() for ln in (existing or "").replace("\r", "\n").split("\n") if ln.strip()]
    for ln in lines:
        if not valid_public_line(ln):
            raise SshKeyError(
                f"the account's key list has a line podtui cannot safely resend: {ln[:40]!r}…; "
                "fix it in RunPod's settings first"
            )
    if not valid_public_line(new_line):
        raise SshKeyError("refusing to register something that is not an SSH public key")
    body = new_line.split()[1]
    if any(ln.split()[1] == body for ln in lines):
        return None
    return "\n".join([*lines, new_line.strip()])
