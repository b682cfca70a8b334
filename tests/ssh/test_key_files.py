"""Private keys and their certificates are read once and parsed from memory: every key type paramiko supports,
OpenSSH's format and PEM, with and without a passphrase; a certificate next to the key is loaded with it."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from pathlib import Path

import paramiko
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from podtui.core.ssh.errors import SshKeyError
from podtui.core.ssh.keys import load_key

PrivateKey = ed25519.Ed25519PrivateKey | rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey

KINDS: dict[str, tuple[Callable[[], PrivateKey], str]] = {
    "ed25519": (ed25519.Ed25519PrivateKey.generate, "ssh-ed25519"),
    "rsa": (lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048), "ssh-rsa"),
    "ecdsa-p256": (lambda: ec.generate_private_key(ec.SECP256R1()), "ecdsa-sha2-nistp256"),
    "ecdsa-p384": (lambda: ec.generate_private_key(ec.SECP384R1()), "ecdsa-sha2-nistp384"),
}
FORMATS = {"openssh": serialization.PrivateFormat.OpenSSH, "pem": serialization.PrivateFormat.TraditionalOpenSSL}


def write_key(path: Path, key: PrivateKey, fmt: str, passphrase: str | None = None) -> None:
    encryption: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(passphrase.encode()) if passphrase else serialization.NoEncryption()
    )
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, FORMATS[fmt], encryption))
    path.chmod(0o600)


def public_line(key: PrivateKey) -> str:
    return key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()


@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("kind", list(KINDS))
def test_every_key_type_loads(tmp_path: Path, kind: str, fmt: str) -> None:
    make, name = KINDS[kind]
    if kind == "ed25519" and fmt == "pem":
        pytest.skip("ed25519 has no traditional PEM form")
    key = make()
    path = tmp_path / "id"
    write_key(path, key, fmt)
    loaded = load_key(path)
    assert loaded.key.get_name() == name
    assert loaded.public_line == " ".join(public_line(key).split()[:2])
    assert loaded.key.public_blob is None  # no certificate next to it


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_a_passphrase(tmp_path: Path, fmt: str) -> None:
    key = KINDS["ecdsa-p256"][0]() if fmt == "pem" else ed25519.Ed25519PrivateKey.generate()
    path = tmp_path / "id"
    write_key(path, key, fmt, "correct horse")
    assert load_key(path, "correct horse").public_line == " ".join(public_line(key).split()[:2])
    with pytest.raises(SshKeyError, match="is protected by a passphrase; load it into ssh-agent"):
        load_key(path)
    with pytest.raises(SshKeyError, match=f"cannot read SSH key {path}"):
        load_key(path, "wrong")


def test_a_passphrase_a_key_does_not_need_is_ignored(tmp_path: Path) -> None:
    key = ed25519.Ed25519PrivateKey.generate()
    write_key(tmp_path / "id", key, "openssh")
    assert load_key(tmp_path / "id", "unneeded").key.get_name() == "ssh-ed25519"


def test_not_a_key(tmp_path: Path) -> None:
    path = tmp_path / "id"
    path.write_text("hello\n")
    with pytest.raises(SshKeyError, match=f"cannot read SSH key {path}"):
        load_key(path)
    path.write_bytes(b"\xff\xfe-----BEGIN OPENSSH PRIVATE KEY-----\n")
    with pytest.raises(SshKeyError, match=f"cannot read SSH key {path}"):
        load_key(path)


def certify(key: PrivateKey, ca: ed25519.Ed25519PrivateKey) -> str:
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        serialization.SSHCertificateBuilder()
        .public_key(key.public_key())  # type: ignore[arg-type]
        .serial(7)
        .type(serialization.SSHCertificateType.USER)
        .key_id(b"podtui-test")
        .valid_principals([b"root"])
        .valid_after(int(now.timestamp()) - 60)
        .valid_before(int(now.timestamp()) + 3600)
        .sign(ca)
    )
    return cert.public_bytes().decode() + " test-cert\n"


@pytest.mark.parametrize("kind", ["ed25519", "rsa", "ecdsa-p256"])
def test_a_certificate_next_to_the_key_is_loaded(tmp_path: Path, kind: str) -> None:
    if not hasattr(serialization, "SSHCertificateBuilder"):
        pytest.skip("this cryptography cannot make SSH certificates")
    key = KINDS[kind][0]()
    path = tmp_path / "id"
    write_key(path, key, "openssh")
    text = certify(key, ed25519.Ed25519PrivateKey.generate())
    Path(f"{path}-cert.pub").write_text(text)
    loaded = load_key(path)
    blob = loaded.key.public_blob
    assert blob is not None and blob.key_type == text.split()[0] and blob.key_type.endswith("-cert-v01@openssh.com")
    assert blob.key_blob == paramiko.PublicBlob.from_string(text).key_blob


def test_a_certificate_that_does_not_fit_the_key(tmp_path: Path) -> None:
    if not hasattr(serialization, "SSHCertificateBuilder"):
        pytest.skip("this cryptography cannot make SSH certificates")
    path = tmp_path / "id"
    write_key(path, ed25519.Ed25519PrivateKey.generate(), "openssh")
    cert = Path(f"{path}-cert.pub")
    cert.write_text(certify(KINDS["ecdsa-p256"][0](), ed25519.Ed25519PrivateKey.generate()))
    with pytest.raises(SshKeyError, match=f"cannot read SSH certificate {cert}"):
        load_key(path)
    cert.write_text("not a certificate\n")
    with pytest.raises(SshKeyError, match=f"cannot read SSH certificate {cert}"):
        load_key(path)
