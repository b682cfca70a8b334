#!/usr/bin/env bash
# Installs everything the test suite needs on a Debian/Ubuntu machine with Python 3.10+ and pip:
# system packages (OpenSSH server for direct-SSH tests, tmux for the tests that type into the real app, rsync
# for podtui sync's rsync route)
# and a virtualenv in .venv with podtui and its test extra.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v tmux >/dev/null 2>&1 || need+=(tmux)
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
command -v ssh-keygen >/dev/null 2>&1 || need+=(openssh-client)
command -v rsync >/dev/null 2>&1 || need+=(rsync)  # podtui sync's rsync route, on both ends of the simulated pod
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  $sudo apt-get install -y -q --no-install-recommends "${need[@]}"
fi
# The autostop watchdog's script is checked with shellcheck (tests/costs/test_autostop.py); where the
# distribution lacks it, that one test says so and skips
if ! command -v shellcheck >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  { $sudo apt-get update -q && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q shellcheck; } ||
    echo "shellcheck could not be installed: the watchdog's shellcheck test will be skipped" >&2
fi

python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[test]'
echo "test environment ready: .venv"
