"""`podtui config show|set-key|keys`: where podtui looks, storing a key without it touching a command line, and
the keys podtui binds (with config.toml's [keys] remaps)."""

from __future__ import annotations

import getpass
import sys
from typing import TextIO

from podtui.core import secret
from podtui.core.config import load_config, resolve_api_key, save_api_key
from podtui.core.paths import Paths, runpod_config_file


def cmd_show(paths: Paths, out: TextIO | None = None) -> int:
    out = out or sys.stdout  # looked up now, so a redirected stdout is honoured
    config = load_config(paths)
    key = resolve_api_key(config)
    out.write(f"config file   {paths.config_file}{'' if paths.config_file.exists() else ' (not created yet)'}\n")
    out.write(f"log file      {paths.log_file}\n")
    out.write(f"data dir      {paths.data_dir}\n")
    out.write(f"runpod config {runpod_config_file()}\n")
    if key is None:
        out.write("API key       none found (see `podtui config set-key`, or try `podtui --demo`)\n")
    else:
        out.write(f"API key       {secret.mask(key.value)} from {key.source} ({key.origin})\n")
    out.write(f"poll interval {config.poll_interval_s:g} s · API timeout {config.api_timeout_s:g} s\n")
    if config.keys:
        from podtui.ui import key_remaps  # the ids live with the bindings

        checked = key_remaps.check(config.keys)
        for key_id, keys in config.keys.items():
            why = checked.refused(key_id)
            note = "" if why is None else f"   ({why}: ignored; see `podtui config keys`)"
            out.write(f"key           {key_id} = {keys}{note}\n")
    return 0


def cmd_keys(paths: Paths, out: TextIO | None = None) -> int:
    """Every key podtui binds, by id: what config.toml's [keys] section remaps. 1 when a remap does not apply (an
    id no binding has, a key Textual never sends, a key another binding on the same screen has)."""
    from podtui.ui import key_remaps, keymap

    out = out or sys.stdout
    config = load_config(paths)
    checked = key_remaps.check(config.keys)
    out.write(
        'Remap any of these in config.toml, e.g.\n  [keys]\n  pods.stop = "x"\n'
        "(* remapped there; ! remapped there but refused, the key kept; several keys: comma-separated)\n\n"
    )
    width = max(len(k.id) for k in keymap.KEYS)
    for k in keymap.KEYS:
        mark = " *" if k.id in checked.applied else " !" if k.id in config.keys else ""
        keys = checked.applied.get(k.id, k.keys) + mark
        out.write(f"{k.id:<{width}}  {keys:<22} {k.tooltip}\n")
    problems = checked.problems(config.keys)
    if problems:
        out.write(f"\n{config.path} [keys]:\n" + "".join(f"  {line}\n" for line in problems))
    return 1 if problems else 0


def cmd_set_key(paths: Paths, from_stdin: bool, out: TextIO | None = None) -> int:
    out = out or sys.stdout  # looked up now, so a redirected stdout is honoured
    # The key is read from the terminal (no echo) or stdin, never from argv, so it stays out of `ps`
    # and shell history.
    if from_stdin or not sys.stdin.isatty():
        value = sys.stdin.readline().strip()
    else:
        value = getpass.getpass("RunPod API key (input hidden): ").strip()
    path = save_api_key(paths, value)
    secret.register(value)
    out.write(f"stored key {secret.mask(value)} in {path} (mode 0600)\n")
    return 0
