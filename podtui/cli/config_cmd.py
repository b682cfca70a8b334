"""`podtui config show|set-key|keys`: where podtui looks, storing a key without it touching a command line, and
the keys podtui binds (with config.toml's [keys] remaps)."""

from __future__ import annotations

import getpass
import sys
from typing import TextIO

from podtui.core import profiles, secret
from podtui.core.config import ConfigError, UnusableKey, is_one_word, load_config, resolve_api_key, save_api_key
from podtui.core.paths import Paths, runpod_config_file


def cmd_show(paths: Paths, out: TextIO | None = None, asked: str | None = None) -> int:
    out = out or sys.stdout  # looked up now, so a redirected stdout is honoured
    config, found = profiles.load(paths)
    chosen = found.choose(asked)
    out.write(f"config file   {paths.config_file}{'' if paths.config_file.exists() else ' (not created yet)'}\n")
    out.write(f"log file      {paths.log_file}\n")
    data_dir = paths.for_profile(chosen.name, found.is_default(chosen.name)).data_dir if chosen else paths.data_dir
    out.write(f"data dir      {data_dir}\n")
    out.write(f"runpod config {runpod_config_file()}\n")
    if chosen is None:
        try:
            key = resolve_api_key(config)
        except UnusableKey as e:  # a key that is not one word: where it is, never the key (a broken file is an error)
            out.write(f"API key       unusable: {e}\n")
        else:
            if key is None:
                out.write("API key       none found (see `podtui config set-key`, or try `podtui --demo`)\n")
            else:
                out.write(f"API key       {secret.mask(key.value)} from {key.source} ({key.origin})\n")
    for profile in found.by_name.values():
        _show_profile(
            out,
            paths,
            profile,
            in_use=chosen is not None and profile.name == chosen.name,
            default=found.is_default(profile.name),
        )
    out.write(f"poll interval {config.poll_interval_s:g} s · API timeout {config.api_timeout_s:g} s\n")
    if config.keys:
        from podtui.ui import key_remaps  # the ids live with the bindings

        checked = key_remaps.check(config.keys)
        for key_id, keys in config.keys.items():
            why = checked.refused(key_id)
            note = "" if why is None else f"   ({why}: ignored; see `podtui config keys`)"
            out.write(f"key           {key_id} = {keys}{note}\n")
    return 0


def _show_profile(out: TextIO, paths: Paths, profile: profiles.Profile, in_use: bool, default: bool) -> None:
    """One profile: where its key comes from and, masked, whether that has one (docs/profiles.md#key-sources)."""
    try:
        key = secret.mask(profiles.key_of(profile, paths).value)
    except ConfigError as e:  # NoProfileKey too: said, and the other profiles still shown
        key = f"none ({e})"
    marks = [m for m, on in (("in use", in_use), ("default", default)) if on]
    extra = [
        f"{k} {v}"
        for k, v in (("daily budget", profile.daily_budget), ("read-only", profile.read_only))
        if v is not None
    ]
    head = f"profile       {profile.name}" + (f" ({', '.join(marks)})" if marks else "")
    out.write(f"{head}: key {key} from {profile.source}" + (f"; {', '.join(extra)}" if extra else "") + "\n")


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


def cmd_set_key(
    paths: Paths,
    from_stdin: bool,
    out: TextIO | None = None,
    profile: str | None = None,
    default_profile: bool = False,
) -> int:
    """profile: the key goes to that profile's own key file (a profile of that name is added to config.toml, with
    key_file = true, when there is none); a profile whose key comes from elsewhere is refused. default_profile: with
    no profile given, config.toml's default_profile, when it has one (the profile in use; never its api_key)."""
    out = out or sys.stdout  # looked up now, so a redirected stdout is honoured
    added = False
    if profile is not None or default_profile:
        _config, found = profiles.load(paths)  # a broken config.toml is refused before the key is asked for
        if profile is None:
            profile = found.default
    if profile is not None:
        existing = found.by_name.get(profile)
        if existing is not None and not existing.key_file:
            raise ConfigError(
                f"profile {profile} takes its key from {existing.source}, not from podtui's key file: "
                f"{profiles.key_help(existing)}; or set key_file = true in its [profiles.{profile}] to store one"
            )
        added = existing is None
        if added:
            profiles.check_new_name(found, profile)
    # The key is read from the terminal (no echo) or stdin, never from argv, so it stays out of `ps`
    # and shell history.
    if from_stdin or not sys.stdin.isatty():
        value = sys.stdin.readline().strip()
    else:
        what = f"profile {profile}'s" if profile is not None else "RunPod"
        value = getpass.getpass(f"{what} API key (input hidden): ").strip()
    if not is_one_word(value):  # checked before anything is written
        raise ConfigError("an API key is one word with no spaces")
    if profile is None:
        path = save_api_key(paths, value)
    else:
        if added:  # config.toml first: a file it cannot be added to leaves no key file behind
            where = profiles.add_key_file_profile(paths, profile)
            out.write(f"added profile {profile} (key_file = true) to {where}\n")
        path = profiles.store_key(paths, profile, value)
    secret.register(value)
    whose = f" for profile {profile}" if profile is not None else ""
    out.write(f"stored key {secret.mask(value)} in {path} (mode 0600){whose}\n")
    return 0
