"""Where podtui says a pod's HTTP ports are (docs/services.md#the-proxy-and-its-limits): config.toml's `proxy_url`
(RunPod's proxy by default), the demo's simulated proxy, in `podtui pods --json`, and in what `podtui sim` prints."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from podtui.cli.main import main
from podtui.core.config import PROXY_URL, Config, ConfigError, load_config
from podtui.core.paths import Paths
from podtui.core.pod import Pod, PodStatus
from podtui.core.pod_links import copyables, service_urls
from podtui.sim.server import SimApiServer
from tests.helpers.sim import DEMO_IDS

TRAIN = DEMO_IDS["train"]
LOCAL = "http://127.0.0.1:8080/{pod_id}-{port}/"


def write_config(paths: Paths, text: str) -> None:
    paths.config_file.parent.mkdir(parents=True, exist_ok=True)
    paths.config_file.write_text(text)


def test_runpods_proxy_unless_the_config_says_otherwise(paths: Paths) -> None:
    assert Config().proxy_url == PROXY_URL == "https://{pod_id}-{port}.proxy.runpod.net"
    write_config(paths, f'proxy_url = "  {LOCAL} "\n')
    assert load_config(paths).proxy_url == LOCAL


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ('"http://127.0.0.1:8080/{pod_id}/"', "must contain {pod_id} and {port}"),
        ('"https://{port}.example.net"', "must contain {pod_id} and {port}"),
        ('"ftp://{pod_id}-{port}.example.net"', "must start with http:// or https://"),
        ('"{pod_id}-{port}.proxy.runpod.net"', "must start with http:// or https://"),
        ('"https://{pod_id}-{port}.example.net/{user}"', "may name no field but {pod_id} and {port}"),
        ('"https://{pod_id}-{port}.example.net/{"', "may name no field but {pod_id} and {port}"),
        ('"https://{pod_id}-{port}.example.net/{0}"', "may name no field but {pod_id} and {port}"),
        ('"https://{pod_id}-{port}.exa mple.net"', "must not contain spaces or control characters"),
        ("8080", "must be a string"),
    ],
)
def test_a_proxy_url_podtui_cannot_fill_in_is_refused(paths: Paths, value: str, words: str) -> None:
    write_config(paths, f"proxy_url = {value}\n")
    with pytest.raises(ConfigError, match=r"config\.toml: proxy_url ") as refused:
        load_config(paths)
    assert words in str(refused.value)


def test_a_brace_written_twice_is_a_brace(paths: Paths) -> None:
    write_config(paths, 'proxy_url = "https://{pod_id}-{port}.example.net/{{x}}"\n')
    assert load_config(paths).proxy_url.format(pod_id="p", port=1) == "https://p-1.example.net/{x}"


def test_links_and_copyables_take_the_template() -> None:
    pod = Pod(id="abc123", name="p", status=PodStatus.RUNNING, ports_spec="8888/http,22/tcp")
    assert service_urls(pod, LOCAL) == ((8888, "http://127.0.0.1:8080/abc123-8888/"),)
    assert [c.text for c in copyables(pod, LOCAL)][-1] == "http://127.0.0.1:8080/abc123-8888/"
    assert service_urls(pod) == ((8888, "https://abc123-8888.proxy.runpod.net"),)


def test_pods_json_uses_the_configs_proxy_url(
    cli_env: SimApiServer, paths: Paths, capsys: pytest.CaptureFixture[str]
) -> None:
    write_config(paths, f'proxy_url = "{LOCAL}"\n')
    assert main(["pods", "--json"]) == 0
    pods = {p["id"]: p for p in json.loads(capsys.readouterr().out)}
    assert {"port": 8888, "type": "http", "url": f"http://127.0.0.1:8080/{TRAIN}-8888/", "public": None} in pods[TRAIN][
        "services"
    ]


def test_the_demos_services_are_at_its_own_proxy(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--demo", "pods", "--json"]) == 0
    pods = {p["id"]: p for p in json.loads(capsys.readouterr().out)}
    (jupyter,) = [s for s in pods[TRAIN]["services"] if s["type"] == "http"]
    assert jupyter["url"].startswith("http://127.0.0.1:") and jupyter["url"].endswith(f"/{TRAIN}-8888/")


def test_podtui_sim_prints_its_proxy_and_serves_it(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "podtui", "sim"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    try:
        assert proc.stdout is not None
        seen, end = b"", time.monotonic() + 60
        while b"HTTP proxy" not in seen or not seen.endswith(b"\n"):
            assert time.monotonic() < end and proc.poll() is None, seen
            if select.select([proc.stdout], [], [], 0.2)[0]:
                seen += os.read(proc.stdout.fileno(), 65536)
        (line,) = [ln for ln in seen.decode().splitlines() if ln.lstrip().startswith("HTTP proxy")]
        template = line.split()[2]
        assert template.startswith("http://127.0.0.1:") and template.endswith("/{pod_id}-{port}/"), line
        assert f'proxy_url = "{template}" in config.toml' in line
        r = httpx.get(template.format(pod_id=TRAIN, port=8888), timeout=10.0)
        assert r.status_code == 200 and "<title>Jupyter Server</title>" in r.text
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    assert proc.returncode == 0
