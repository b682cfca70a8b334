"""What the simulated Hugging Face Hub holds: users, their tokens, and a few small repos with deterministic files.

Sizes are a few hundred kB so a whole download takes well under a second on loopback; one file per repo is an
LFS-style safetensors file (the Hub gives its sha256), the rest are plain git blobs (the Hub gives their git sha1).
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
from dataclasses import dataclass, field
from typing import Literal

Gated = Literal[False, "auto", "manual"]
Role = Literal["read", "write", "fineGrained"]
PUBLIC_MODEL = "podtui-sim/tiny-gpt2"
GATED_MODEL = "podtui-sim/llama-mini"  # gated like meta-llama's repos: a license to accept first
GATED_NOT_ACCEPTED = "podtui-sim/gemma-mini"  # gated, and the demo user never accepted its license
PUBLIC_DATASET = "podtui-sim/tiny-corpus"
MISSING_MODEL = "podtui-sim/no-such-model"


def git_blob_sha1(data: bytes) -> str:
    """The id git gives a file's content; the Hub reports it as `blobId`/`oid` for files not in LFS."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _noise(seed: str, size: int) -> bytes:
    out = bytearray()
    counter = 0
    while len(out) < size:
        out += hashlib.sha256(f"{seed}:{counter}".encode()).digest()
        counter += 1
    return bytes(out[:size])


def _safetensors(seed: str, size: int) -> bytes:
    """A file in the safetensors layout (8-byte header length, JSON header, raw tensor bytes)."""
    n = size // 2
    header = json.dumps(
        {"__metadata__": {"format": "pt"}, "weight": {"dtype": "F16", "shape": [n], "data_offsets": [0, 2 * n]}}
    ).encode()
    return struct.pack("<Q", len(header)) + header + _noise(seed, 2 * n)


@dataclass(frozen=True)
class HubFile:
    path: str
    data: bytes
    lfs: bool = False

    @property
    def size(self) -> int:
        return len(self.data)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def pointer(self) -> bytes:
        """What git stores for an LFS file: a small pointer text."""
        return f"version https://git-lfs.github.com/spec/v1\noid sha256:{self.sha256}\nsize {self.size}\n".encode()

    @property
    def blob_id(self) -> str:
        return git_blob_sha1(self.pointer if self.lfs else self.data)


@dataclass
class HubRepo:
    repo_id: str
    repo_type: Literal["model", "dataset"]
    files: list[HubFile]
    gated: Gated = False

    @property
    def sha(self) -> str:
        h = hashlib.sha1(self.repo_id.encode(), usedforsecurity=False)
        for f in self.files:
            h.update(f.path.encode() + f.blob_id.encode())
        return h.hexdigest()

    def file(self, path: str) -> HubFile | None:
        return next((f for f in self.files if f.path == path), None)


@dataclass(frozen=True)
class HubToken:
    value: str
    user: str
    role: Role
    can_read_gated: bool = True
    name: str = "podtui"


@dataclass
class HubSeed:
    repos: dict[str, HubRepo] = field(default_factory=dict)  # "model:owner/name" -> repo
    tokens: dict[str, HubToken] = field(default_factory=dict)  # kind -> token
    accepted: dict[str, set[str]] = field(default_factory=dict)  # user -> gated repo ids whose license they accepted


def _token(name: str) -> str:
    # Fixed per name, so the masked token in screenshots stays the same; they open nothing outside the simulator.
    digest = hashlib.sha256(f"podtui-sim-hub:{name}".encode()).digest()
    return "hf_" + base64.b32encode(digest).decode().lower()[:34]


def _config(name: str) -> bytes:
    return (
        json.dumps(
            {
                "architectures": ["LlamaForCausalLM"],
                "model_type": "llama",
                "hidden_size": 64,
                "num_hidden_layers": 2,
                "vocab_size": 512,
                "_name_or_path": name,
            },
            indent=2,
        ).encode()
        + b"\n"
    )


def default_seed() -> HubSeed:
    gitattributes = b"*.safetensors filter=lfs diff=lfs merge=lfs -text\n"
    public = HubRepo(
        PUBLIC_MODEL,
        "model",
        [
            HubFile(".gitattributes", gitattributes),
            HubFile("README.md", b"# tiny-gpt2\n\nA tiny public model served by podtui's simulated Hub.\n"),
            HubFile("config.json", _config(PUBLIC_MODEL)),
            HubFile("tokenizer.json", _noise("tiny-gpt2/tokenizer", 48_000).hex()[:48_000].encode()),
            HubFile("model.safetensors", _safetensors("tiny-gpt2/weights", 256_000), lfs=True),
        ],
    )
    gated = HubRepo(
        GATED_MODEL,
        "model",
        [
            HubFile(".gitattributes", gitattributes),
            HubFile("LICENSE", b"LLAMA-MINI COMMUNITY LICENSE (simulated)\nAccept it on the repo page first.\n"),
            HubFile(
                "README.md",
                b"# llama-mini\n\nA gated model: accept the license, and use a token allowed to read "
                b"public gated repositories.\n",
            ),
            HubFile("config.json", _config(GATED_MODEL)),
            HubFile("generation_config.json", b'{"do_sample": true, "temperature": 0.6}\n'),
            HubFile("model.safetensors", _safetensors("llama-mini/weights", 384_000), lfs=True),
        ],
        gated="manual",
    )
    gated_other = HubRepo(
        GATED_NOT_ACCEPTED,
        "model",
        [
            HubFile(".gitattributes", gitattributes),
            HubFile("LICENSE", b"GEMMA-MINI TERMS OF USE (simulated)\n"),
            HubFile("config.json", _config(GATED_NOT_ACCEPTED)),
            HubFile("model.safetensors", _safetensors("gemma-mini/weights", 128_000), lfs=True),
        ],
        gated="manual",
    )
    dataset = HubRepo(
        PUBLIC_DATASET,
        "dataset",
        [
            HubFile(".gitattributes", b"*.parquet filter=lfs diff=lfs merge=lfs -text\n"),
            HubFile("README.md", b"# tiny-corpus\n"),
            HubFile("data/train.jsonl", b"".join(b'{"text": "line %d"}\n' % i for i in range(2000))),
            HubFile("data/train.parquet", _noise("tiny-corpus/parquet", 64_000), lfs=True),
        ],
    )
    seed = HubSeed()
    for repo in (public, gated, gated_other, dataset):
        seed.repos[f"{repo.repo_type}:{repo.repo_id}"] = repo
    seed.tokens = {
        # a classic read token: it may read gated repos
        "read": HubToken(_token("read"), "alice", "read", name="podtui-read"),
        "no_gated_scope": HubToken(_token("fine"), "alice", "fineGrained", can_read_gated=False, name="fine-no-gated"),
        "no_license": HubToken(_token("bob"), "bob", "read", name="bob-read"),  # bob never accepted the license
    }
    seed.accepted = {"alice": {GATED_MODEL}, "bob": set()}
    return seed
