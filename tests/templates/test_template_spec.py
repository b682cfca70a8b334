"""A template from a pod: what goes into the CreateTemplateRequest, and that no credential-looking value ever
does, in clear: each is a RunPod secret reference or left out, unless only its key's name looked like one and the
user asked to keep it. The credential rule itself (podtui hides env values by it everywhere): every real credential
caught, and the usual false friends (TOKENIZERS_PARALLELISM, MAX_NEW_TOKENS, KEYBOARD, AUTHOR) not."""

from __future__ import annotations

import json
import random
import string

import pytest

from podtui.core.demo_sandbox import SANDBOX_ENV
from podtui.core.pod import Pod, PodStatus, redact_env
from podtui.core.template_spec import (
    default_choices,
    is_reference,
    looks_secret,
    may_keep_in_clear,
    secret_reference,
    template_from_pod,
)

SECRETS = {
    "HF_TOKEN": "hf_abcdefghijklmnopqrstuvwxyz0123",
    "WANDB_API_KEY": "0123456789abcdef0123456789abcdef01234567",
    "DB_URL": "postgres://me:hunter2hunter2@db.example:5432/x",
    "OPENAI": "sk-proj-abcdefghijklmnop",
    "JUPYTER_PASSWORD": "letmein-please",
}
PLAIN = {"HF_HOME": "/workspace/hf", "WANDB_PROJECT": "llama-lora", "QUOTE": 'say "hi"\n'}


def _pod(**kw: object) -> Pod:
    fields: dict[str, object] = {
        "id": "pod1",
        "name": "trainer",
        "status": PodStatus.RUNNING,
        "image": "runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04",
        "gpu_count": 1,
        "gpu_name": "NVIDIA GeForce RTX 3090",
        "container_disk_gb": 30.0,
        "volume_gb": 100.0,
        "volume_mount_path": "/workspace",
        "ports_spec": "8888/http,22/tcp",
        "env": tuple({**PLAIN, **SECRETS, "PUBLIC_KEY": "ssh-ed25519 AAAA me", SANDBOX_ENV: "/tmp/x"}.items()),
    }
    fields.update(kw)
    return Pod(**fields)  # type: ignore[arg-type]


def test_credentials_are_recognised_as_podtui_hides_them() -> None:
    assert all(looks_secret(k, v) for k, v in SECRETS.items())
    assert not any(looks_secret(k, v) for k, v in PLAIN.items())
    assert is_reference("{{ RUNPOD_SECRET_hf_token }}") and is_reference("{{RUNPOD_SECRET_x}}")
    assert not is_reference("{{ RUNPOD_SECRET_ }}") and not is_reference("hf_x {{ RUNPOD_SECRET_a }}")
    assert secret_reference("HF_TOKEN") == "{{ RUNPOD_SECRET_hf_token }}"


def test_secrets_become_references_by_default_and_the_rest_is_kept() -> None:
    draft = template_from_pod("my-template", _pod())
    body = draft.body
    env = body["env"]
    assert isinstance(env, dict)
    assert env["HF_HOME"] == "/workspace/hf" and env["QUOTE"] == 'say "hi"\n'
    assert env["HF_TOKEN"] == "{{ RUNPOD_SECRET_hf_token }}"
    assert env["WANDB_API_KEY"] == "{{ RUNPOD_SECRET_wandb_api_key }}"
    assert dict(draft.references) == {k: k.lower() for k in SECRETS}
    assert "PUBLIC_KEY" not in env and SANDBOX_ENV not in env  # set by RunPod, or by the demo
    need = draft.secrets_needed()
    assert need is not None and "hf_token" in need and "wandb_api_key" in need
    assert body["image"] == "runpod/pytorch:2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04"
    assert body["disk"] == 30 and body["mounts"] == {"persistent": {"size": 100, "path": "/workspace"}}
    assert body["ports"] == ["8888/http", "22/tcp"] and body["category"] == "NVIDIA"
    assert body["startJupyter"] is True and body["startSsh"] is True and body["public"] is False


@pytest.mark.parametrize("secrets", ["reference", "omit"])
def test_no_credential_value_is_ever_in_the_body(secrets: str) -> None:
    draft = template_from_pod("t", _pod(), secrets)  # type: ignore[arg-type]
    sent = json.dumps(draft.body) + "\n".join(draft.lines())
    for value in SECRETS.values():
        assert value not in sent
    if secrets == "omit":
        assert set(draft.omitted) == set(SECRETS) and not draft.references and draft.secrets_needed() is None


def test_per_key_choices_and_keeping_a_credential_is_refused() -> None:
    draft = template_from_pod("t", _pod(), choices={"WANDB_PROJECT": "omit", "HF_HOME": "reference"})
    env = draft.body["env"]
    assert isinstance(env, dict)
    assert "WANDB_PROJECT" not in env and env["HF_HOME"] == "{{ RUNPOD_SECRET_hf_home }}"
    with pytest.raises(ValueError, match="HF_TOKEN holds a known kind of token"):
        template_from_pod("t", _pod(), choices={"HF_TOKEN": "keep"})
    with pytest.raises(ValueError, match="has no env key NOPE"):
        template_from_pod("t", _pod(), choices={"NOPE": "keep"})


def test_a_reference_already_is_kept_as_it_is() -> None:
    pod = _pod(env=(("HF_TOKEN", "{{ RUNPOD_SECRET_mine }}"),))
    assert default_choices(pod.env) == {"HF_TOKEN": "keep"}
    assert template_from_pod("t", pod).body["env"] == {"HF_TOKEN": "{{ RUNPOD_SECRET_mine }}"}


def test_a_network_volume_is_not_kept_and_said() -> None:
    draft = template_from_pod("t", _pod(network_volume="vol1", volume_gb=None, volume_mount_path="/data"))
    assert "mounts" not in draft.body
    assert any("network volume (vol1) is not kept" in n for n in draft.notes)


def test_what_a_pod_without_jupyter_disk_or_volume_gives() -> None:
    draft = template_from_pod(
        "t", _pod(env=(("A", "1"),), container_disk_gb=None, volume_gb=0.0, ports_spec=None, gpu_count=0)
    )
    body = draft.body
    assert "disk" not in body and "mounts" not in body and body["ports"] == []
    assert body["startJupyter"] is False and body["category"] == "CPU"


@pytest.mark.parametrize(
    ("name", "pod", "said"),
    [
        ("", _pod(), "give the template a name"),
        ("a\x1bb", _pod(), "no newlines or control characters"),
        ("x" * 101, _pod(), "at most 100"),
        ("t", _pod(image=None), "did not say which image"),
        ("t", _pod(ports_spec="8888/udp"), "ports cannot go in a template"),
    ],
)
def test_what_cannot_make_a_template_is_said(name: str, pod: Pod, said: str) -> None:
    with pytest.raises(ValueError, match=said):
        template_from_pod(name, pod)


def test_a_public_template_warns_that_its_env_is_readable() -> None:
    draft = template_from_pod("t", _pod(), public=True)
    assert any("readable by every RunPod user" in n for n in draft.notes)
    assert any(line.startswith("visible    public") for line in draft.lines())


CREDENTIALS = [
    ("HF_TOKEN", "hf_abcdefghijklmnop"),
    ("HUGGING_FACE_HUB_TOKEN", "abc-123"),
    ("WANDB_API_KEY", "abc"),
    ("OPENAI_API_KEY", "whatever"),
    ("RUNPOD_API_KEY", "rpa_x"),
    ("AWS_SECRET_ACCESS_KEY", "abc/def"),
    ("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE"),
    ("AWS_SESSION_TOKEN", "FwoG..."),
    ("GITHUB_TOKEN", "ghp_x"),
    ("HFTOKEN", "abcdef"),
    ("OPENAIAPIKEY", "abcdef"),
    ("DBPASSWORD", "hunter2"),
    ("apiKey", "abcdef"),
    ("authToken", "abcdef"),
    ("X-Auth-Token", "abcdef"),
    ("JUPYTER_PASSWORD", "1234"),  # a password may be a short number
    ("DB_PASS", "0"),
    ("MYSQL_PWD", "pw"),
    ("CLIENT_SECRET", "s3"),
    ("PRIVATE_KEY", "-----BEGIN"),
    ("SESSION_COOKIE", "abc=def"),
    ("GOOGLE_APPLICATION_CREDENTIALS", "{...}"),
    ("BASIC_AUTH", "me:pw"),
    ("NOTE", "hf_abcdefabcdefabcdef"),  # by the value's shape, whatever the key
    ("DATABASE_URL", "postgres://me:pw@db:5432/x"),
    ("ANYTHING", "a" * 40),
    # a short number or a word under a credential's name: a PIN, a password (only switches are let off)
    ("JUPYTER_TOKEN", "12345"),
    ("VNC_SECRET", "4821"),
    ("API_TOKEN", "none"),
    ("DB_PASSWORD", "false"),  # under a password's name, anything
    # run-together names
    ("HF_API_TOKENS", "abc"),
    ("OPENAIKEY", "abc"),
    ("WANDBKEY", "abc"),
    ("PASSKEY", "abc"),
    ("APIKEYS", "abc"),
    # by the value's form, under keys that name nothing
    ("CACHE_URL", "redis://:s3cret@redis:6379/0"),
    ("SESSION_JWT_NOTE", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
    ("NOTE", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dBjftJeZ4CVP"),
    ("AWS_ID", "AKIAIOSFODNN7EXAMPLE"),
    ("AWS_TEMP_ID", "ASIAIOSFODNN7EXAMPLE"),
    ("STRIPE", "sk_live_51Habc"),
    ("STRIPE_TEST", "sk_test_51Habc"),
    ("STRIPE_RESTRICTED", "rk_live_51Habc"),
    ("GITLAB", "glpat-abcdefghij"),
    ("AZURE_STORAGE", "DefaultEndpointsProtocol=https;AccountName=me;AccountKey=abc+def==;EndpointSuffix=x"),
    ("SLACK_HOOK", "https://hooks.slack.com/services/T0000/B0000/XXXXXXXX"),
    ("DISCORD_HOOK", "https://discord.com/api/webhooks/1234/abcdef"),
    ("SENTRY_DSN", "https://0123456789abcdef0123456789abcdef@o42.ingest.sentry.io/7"),
    ("SENTRY", "https://abc123@o42.ingest.us.sentry.io/7"),
    ("REPO", "https://ghp1234567890abcdefghij@github.com/me/x.git"),
    ("BLOB", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),  # base64, slashes and all
    ("DIGEST", "0123456789abcdef0123456789abcdef01234567"),
    ("RUN", "123e4567-e89b-12d3-a456-426614174000"),
]
NOT_CREDENTIALS = [
    ("TOKENIZERS_PARALLELISM", "false"),
    ("MAX_NEW_TOKENS", "512"),
    ("KEYBOARD", "us"),
    ("AUTHOR", "me"),
    ("USE_AUTH_TOKEN", "true"),
    ("HF_HUB_DISABLE_TOKEN", "1"),
    ("API_KEY_COUNT", "4"),
    ("PWD", "/workspace"),
    ("OLDPWD", "/root"),
    ("PASSAGE_LEN", "256"),
    ("MONKEY_PATCH", "yes"),
    ("HF_TOKEN", ""),  # nothing to hide
    ("PRIVATE", "off"),
    ("MAX_TOKENS", "4096"),  # a number under a name that counts
    ("N_KEYS", "8"),
    ("TOKEN_TIMEOUT", "30"),
    ("MAXTOKENS", "256"),
    ("MONKEY", "george"),
    ("HOTKEY", "ctrl+k"),
    # model names, paths and run names: long, but made of words
    ("MODEL_NAME", "meta-llama/Meta-Llama-3-8B-Instruct"),
    ("HF_MODEL", "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B"),
    ("MODEL_PATH", "/workspace/models/llama-3-8b-instruct"),
    ("OUTPUT_DIR", "/workspace/outputs/run_2024_lora_final"),
    ("EMBEDDER", "sentence-transformers/all-MiniLM-L6-v2"),
    ("MOE", "mistralai/Mixtral-8x7B-Instruct-v0.1"),
    ("CODER", "Qwen/Qwen2.5-Coder-32B-Instruct"),
    ("QUANT", "unsloth/Meta-Llama-3.1-8B-Instruct-bnb-4bit"),
    ("DATA", "/workspace/datasets/openwebtext_train.bin"),
    # look-alikes of the value rules
    ("URL", "http://host:8080/x?mail=me@example.com"),
    ("GIT", "ssh://git@github.com/me/repo.git"),
    ("INVITE", "https://discord.com/invite/abc"),
    ("HELP", "https://docs.sentry.io/platforms/python/"),
    ("SLACK", "https://slack.com/apps"),
    ("AZURE", "DefaultEndpointsProtocol=https;AccountName=me;EndpointSuffix=core.windows.net"),
    ("NOTE", "AKIA1234"),
    ("MODE", "sk_lively"),
    ("EYE", "eyJust.looking"),
]


@pytest.mark.parametrize(("key", "value"), CREDENTIALS, ids=[k for k, _ in CREDENTIALS])
def test_every_credential_is_hidden(key: str, value: str) -> None:
    assert looks_secret(key, value)
    assert redact_env(((key, value),))[0][1] != value


@pytest.mark.parametrize(("key", "value"), NOT_CREDENTIALS, ids=[k for k, _ in NOT_CREDENTIALS])
def test_keys_that_only_contain_a_credential_word_are_not_hidden(key: str, value: str) -> None:
    assert not looks_secret(key, value)
    assert redact_env(((key, value),)) == ((key, value),)


@pytest.mark.parametrize(
    "alphabet",
    [string.ascii_letters + string.digits + "+/", string.ascii_letters + string.digits + "-_", "0123456789abcdef"],
    ids=["base64", "base64url", "hex"],
)
def test_random_tokens_of_unknown_kinds_are_hidden(alphabet: str) -> None:
    """Whatever their separators happen to cut them into, random runs are not taken for words."""
    rng = random.Random(7)
    for _ in range(3000):
        token = "".join(rng.choice(alphabet) for _ in range(rng.randint(32, 64)))
        assert looks_secret("NOTE", token), token


def test_only_tokens_of_a_known_kind_are_never_kept_in_clear() -> None:
    assert may_keep_in_clear("DIGEST", "0123456789abcdef0123456789abcdef01234567")  # a hash may be no secret
    assert may_keep_in_clear("GRADER_TOKEN", "alpha-beta")
    for key, value in [("A", "hf_abcdefghijklmnop"), ("B", "redis://:pw@r:6379"), ("C", "AKIAIOSFODNN7EXAMPLE")]:
        assert looks_secret(key, value) and not may_keep_in_clear(key, value)
    assert not may_keep_in_clear("MODEL", "meta-llama/Meta-Llama-3-8B-Instruct")  # nothing to keep: not a secret
    env = (("DIGEST", "0123456789abcdef0123456789abcdef01234567"),)
    assert template_from_pod("t", _pod(env=env)).body["env"] == {"DIGEST": "{{ RUNPOD_SECRET_digest }}"}
    kept = template_from_pod("t", _pod(env=env), choices={"DIGEST": "keep"})
    assert kept.body["env"] == dict(env) and kept.kept_in_clear == ("DIGEST",)


def test_a_template_keeps_model_names_and_paths() -> None:
    env = (("MODEL_NAME", "meta-llama/Meta-Llama-3-8B-Instruct"), ("OUT", "/workspace/outputs/run_2024_lora_final"))
    draft = template_from_pod("t", _pod(env=env), choices={"MODEL_NAME": "keep", "OUT": "keep"})
    assert draft.body["env"] == dict(env) and draft.references == () and draft.kept_in_clear == ()


def test_a_template_from_a_hugging_face_pod_keeps_its_settings() -> None:
    env = (("TOKENIZERS_PARALLELISM", "false"), ("MAX_NEW_TOKENS", "512"), ("HF_TOKEN", "hf_abcdefghijklmnop"))
    body = template_from_pod("t", _pod(env=env)).body
    assert body["env"] == {
        "TOKENIZERS_PARALLELISM": "false",
        "MAX_NEW_TOKENS": "512",
        "HF_TOKEN": "{{ RUNPOD_SECRET_hf_token }}",
    }


def test_a_key_named_like_a_credential_is_kept_in_clear_only_when_asked() -> None:
    env = (("GRADER_TOKEN", "alpha-beta"), ("HF_TOKEN", "hf_abcdefghijklmnop"))
    assert may_keep_in_clear("GRADER_TOKEN", "alpha-beta") and not may_keep_in_clear(*env[1])
    draft = template_from_pod("t", _pod(env=env))
    assert draft.body["env"] == {  # by default: a reference, as any credential
        "GRADER_TOKEN": "{{ RUNPOD_SECRET_grader_token }}",
        "HF_TOKEN": "{{ RUNPOD_SECRET_hf_token }}",
    }
    assert draft.kept_in_clear == () and draft.clear_warning() == ""
    kept = template_from_pod("t", _pod(env=env), choices={"GRADER_TOKEN": "keep"}, public=True)
    assert kept.body["env"] == {"GRADER_TOKEN": "alpha-beta", "HF_TOKEN": "{{ RUNPOD_SECRET_hf_token }}"}
    assert kept.kept_in_clear == ("GRADER_TOKEN",) and "every RunPod user can read them" in kept.clear_warning()
    assert any(line.startswith("in clear   GRADER_TOKEN") for line in kept.lines())
    with pytest.raises(ValueError, match="HF_TOKEN holds a known kind of token"):
        template_from_pod("t", _pod(env=env), choices={"HF_TOKEN": "keep"})
