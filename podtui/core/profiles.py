"""Named profiles: several RunPod accounts in one config.toml, each with the one place its key comes from
(docs/profiles.md).

    default_profile = "work"
    [profiles.work]
    key_env = "RUNPOD_KEY_WORK"      # an environment variable
    [profiles.lab]
    key_file = true                  # podtui's key file for it (`podtui config set-key --profile lab`)
    daily_budget = 40
    [profiles.mine]
    key_source = "runpodctl"         # ~/.runpod/config.toml, as runpodctl and the SDK write it

A profile's key comes from its own source and nowhere else: never RUNPOD_API_KEY, config.toml's api_key or
another profile's source (docs/profiles.md#key-isolation). Without profiles, or with none chosen, the key is found
as it always was (`config.resolve_api_key`).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from podtui.core import secret, units
from podtui.core.config import (
    ApiKey,
    Config,
    ConfigError,
    checked_key,
    config_from,
    from_runpod_config,
    is_one_word,
    parse_config_toml,
    read_config_toml,
)
from podtui.core.paths import Paths, runpod_config_file
from podtui.core.user_files import NotAFile, read_user_file

if TYPE_CHECKING:
    from podtui.core.api.client import RunPodApi

log = logging.getLogger(__name__)

PROFILE_ENV = "PODTUI_PROFILE"  # the profile when --profile is not given
NAME_HELP = "1 to 32 letters, digits, '-' or '_', starting with a letter or digit"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_SOURCES = ("key_env", "key_file", "key_source")
_OVERRIDES = ("daily_budget", "read_only")
_BUDGET = (0.01, 1e6)  # as config.toml's own daily_budget
MAX_KEY_BYTES = 4096  # a key file is one short line; anything larger is not one


class NoProfileKey(ConfigError):
    """A profile's own key source has no key. Said in words; no other key is tried."""


@dataclass(frozen=True)
class Profile:
    name: str
    key_env: str | None = None  # the environment variable holding its key
    key_file: bool = False  # podtui's key file for it, under the config folder
    runpodctl: bool = False  # ~/.runpod/config.toml
    daily_budget: float | None = None  # replaces config.toml's for this account
    read_only: bool | None = None  # None: config.toml's

    @property
    def source(self) -> str:
        """Where its key comes from, in a few words."""
        if self.key_env is not None:
            return f"env {self.key_env}"
        if self.key_file:
            return "podtui key file"
        return "runpodctl config"


@dataclass(frozen=True)
class Profiles:
    by_name: Mapping[str, Profile]  # in config.toml's order
    default: str | None = None  # default_profile
    path: Path | None = None  # the config file, for messages

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.by_name)

    def choose(self, asked: str | None) -> Profile | None:
        """The profile asked for (--profile, PODTUI_PROFILE), else the default one; None: no profile is in use."""
        name = asked if asked is not None else self.default
        if name is None:
            return None
        found = self.by_name.get(name)
        if found is None:
            known = ", ".join(self.names) if self.by_name else "none (add [profiles.NAME] tables to config.toml)"
            where = f" in {self.path}" if self.path is not None else ""
            raise ConfigError(f"no profile named {name!r}{where}; the profiles: {known}")
        return found

    def is_default(self, name: str) -> bool:
        return name == self.default


NO_PROFILES = Profiles({})

# Every profile's key variable this process has read of config.toml: whatever profile is in use, none of them goes to
# ssh or an editor (openssh.ssh_env), so a SendEnv cannot carry another account's key to a pod
# (docs/profiles.md#key-isolation). Names only: no other profile's key is read for it.
_key_env_lock = threading.Lock()
_key_env_names: set[str] = set()


def key_env_names() -> frozenset[str]:
    with _key_env_lock:
        return frozenset(_key_env_names)


def _note_key_envs(found: Profiles) -> None:
    names = {p.key_env for p in found.by_name.values() if p.key_env is not None}
    with _key_env_lock:
        _key_env_names.update(names)


def check_name(name: str) -> str:
    """`name` if it can be a profile's (it names a folder and a file); ConfigError otherwise."""
    if not _NAME.fullmatch(name):
        shown = name.encode("unicode_escape").decode("ascii")[:40]  # text from outside: shown, never acted on
        raise ConfigError(f"profile name {shown!r} must be {NAME_HELP}")
    return name


def _problem(path: Path, name: str, what: str) -> ConfigError:
    return ConfigError(f"{path}: [profiles.{name}] {what}")


def _profile(path: Path, name: str, table: object) -> Profile:
    try:
        check_name(name)
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}") from None
    if not isinstance(table, dict):
        raise ConfigError(f'{path}: profiles.{name} must be a table: [profiles.{name}] then key_env = "VAR"')
    unknown = sorted(k for k in table if k not in _SOURCES + _OVERRIDES)
    if unknown:
        shown = ", ".join(k.encode("unicode_escape").decode("ascii")[:40] for k in unknown)
        raise _problem(
            path,
            name,
            f"has {shown}, which podtui does not know; a profile takes one of "
            f"{', '.join(_SOURCES)} and optionally {', '.join(_OVERRIDES)}"
            + (" (default_profile goes above the first [table])" if "default_profile" in unknown else ""),
        )
    given = [k for k in _SOURCES if k in table]
    if len(given) != 1:
        said = "none" if not given else " and ".join(given)
        raise _problem(
            path,
            name,
            f'needs exactly one key source, not {said}: key_env = "VAR", key_file = true or key_source = "runpodctl"',
        )
    values: dict[str, Any] = {}
    if "key_env" in table:
        var = table["key_env"]
        if not isinstance(var, str) or not _ENV_NAME.fullmatch(var):
            raise _problem(path, name, "key_env must name an environment variable (letters, digits and _)")
        values["key_env"] = var
    elif "key_file" in table:
        if table["key_file"] is not True:
            raise _problem(
                path, name, f"key_file must be true (the key is stored by `podtui config set-key --profile {name}`)"
            )
        values["key_file"] = True
    elif table["key_source"] != "runpodctl":
        raise _problem(path, name, 'key_source must be "runpodctl" (the key in ~/.runpod/config.toml)')
    else:
        values["runpodctl"] = True
    if "daily_budget" in table:
        raw, (low, high) = table["daily_budget"], _BUDGET
        if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not low <= raw <= high:
            raise _problem(path, name, f"daily_budget must be a number from {low:g} to {high:g}")
        values["daily_budget"] = float(raw)
    if "read_only" in table:
        if not isinstance(table["read_only"], bool):
            raise _problem(path, name, "read_only must be true or false")
        values["read_only"] = table["read_only"]
    return Profile(name, **values)


def profiles_from(path: Path, data: Mapping[str, Any]) -> Profiles:
    """config.toml's [profiles.NAME] tables and default_profile, checked: every bad shape is a ConfigError."""
    section = data.get("profiles", {})
    if not isinstance(section, dict):
        raise ConfigError(f'{path}: profiles must be tables: [profiles.NAME] then key_env = "VAR"')
    by_name = {name: _profile(path, name, table) for name, table in section.items()}
    folded: dict[str, str] = {}
    for name in by_name:  # a name is a file and a folder: Work and work are one on a case-insensitive disk
        other = folded.setdefault(name.casefold(), name)
        if other != name:
            raise ConfigError(f"{path}: profiles {other} and {name} differ only in case; rename one")
    default = data.get("default_profile")
    if default is not None:
        if not isinstance(default, str) or not default:
            raise ConfigError(f"{path}: default_profile must be a profile's name")
        if default not in by_name:
            known = ", ".join(by_name) or "none"
            shown = default.encode("unicode_escape").decode("ascii")[:40]
            raise ConfigError(f"{path}: default_profile {shown!r} is not a profile; the profiles: {known}")
    found = Profiles(by_name, default, path)
    _note_key_envs(found)
    return found


def load(paths: Paths) -> tuple[Config, Profiles]:
    """The config and the profiles, from one read of config.toml."""
    path = paths.config_file
    if not path.exists():
        return Config(), NO_PROFILES
    data = read_config_toml(path)
    return config_from(path, data), profiles_from(path, data)


def config_for(config: Config, profile: Profile) -> Config:
    """The config an account runs with: its overrides applied, and config.toml's own api_key taken out, so nothing
    built from this config can reach for it."""
    changes: dict[str, Any] = {"api_key": None}
    if profile.daily_budget is not None:
        changes["daily_budget"] = profile.daily_budget
    if profile.read_only is not None:
        changes["read_only"] = profile.read_only
    return dataclasses.replace(config, **changes)


def key_file(paths: Paths, name: str) -> Path:
    return paths.keys_dir() / f"{name}.key"


def key_of(
    profile: Profile, paths: Paths, environ: Mapping[str, str] | None = None, runpod_config: Path | None = None
) -> ApiKey:
    """The profile's key, from its own source only; NoProfileKey, saying where it looked, when that has none."""
    env = os.environ if environ is None else environ
    found: ApiKey | None = None
    if profile.key_env is not None:
        value = env.get(profile.key_env, "").strip()
        if not value:
            raise NoProfileKey(
                f"profile {profile.name} takes its key from the environment variable {profile.key_env}, which is "
                f"not set (read -rs {profile.key_env} && export {profile.key_env})"
            )
        value = checked_key(value, f"the environment variable {profile.key_env} (profile {profile.name})")
        found = ApiKey(value, "environment", profile.key_env)
    elif profile.key_file:
        path = key_file(paths, profile.name)
        value = _read_key_file(path, profile.name)
        found = ApiKey(value, "podtui key file", str(path))
    else:
        path = runpod_config or runpod_config_file()
        value = from_runpod_config(path) or ""
        if not value:
            raise NoProfileKey(
                f"profile {profile.name} takes its key from runpodctl's config, and {path} holds none "
                "(`runpodctl config --apiKey ...` writes it)"
            )
        found = ApiKey(checked_key(value, f"{path} (profile {profile.name})"), "runpod config", str(path))
    secret.register(found.value)
    return found


def replace_hint_for(profile: Profile) -> str:
    """How to give profile `profile` another key, for a refused key's message: its own source, never another's."""
    if profile.key_file:
        return f"then `podtui config set-key --profile {profile.name}`"
    if profile.key_env is not None:
        var = profile.key_env
        return f"then set {var} to a working key (read -rs {var} && export {var})"
    return f"then `runpodctl config --apiKey ...` (it writes {runpod_config_file()})"


def key_help(profile: Profile) -> str:
    """Where profile `profile`'s key is given, in a sentence (the app's "RunPod API key" when it cannot store one)."""
    if profile.key_env is not None:
        return (
            f"profile {profile.name} takes its key from the environment variable {profile.key_env}: set it before "
            f"starting podtui (read -rs {profile.key_env} && export {profile.key_env})"
        )
    if profile.key_file:
        return f"profile {profile.name}'s key is stored by `podtui config set-key --profile {profile.name}`"
    return (
        f"profile {profile.name} takes its key from runpodctl's {runpod_config_file()}: "
        "`runpodctl config --apiKey ...` writes it"
    )


def _read_key_file(path: Path, name: str) -> str:
    set_key = f"`podtui config set-key --profile {name}`"
    if not path.exists():
        raise NoProfileKey(f"profile {name} takes its key from {path}, which does not exist yet: {set_key} stores it")
    try:
        raw = read_user_file(path, MAX_KEY_BYTES)
    except NotAFile as e:
        raise ConfigError(str(e)) from None
    except OSError as e:
        raise NoProfileKey(f"profile {name}: cannot read {path}: {e.strerror}") from None
    try:
        value = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        value = ""
    if not is_one_word(value):
        raise NoProfileKey(f"profile {name}: {path} does not hold one key; {set_key} replaces it")
    _warn_if_readable(path)
    return value


def _warn_if_readable(path: Path) -> None:
    """A key file others can read is used, as ssh would not, but said in the log (podtui writes it 0600)."""
    try:
        mode = path.stat().st_mode & 0o777
    except OSError:
        return
    if mode & 0o077:
        log.warning("%s can be read by others (mode %o): `chmod 600 %s`", path, mode, path)


def store_key(paths: Paths, name: str, api_key: str) -> Path:
    """The profile's key file, 0600 from its first byte, in a 0700 folder."""
    api_key = api_key.strip()
    if not is_one_word(api_key):
        raise ConfigError("an API key is one word with no spaces")
    check_name(name)
    secret.private_dir(paths.keys_dir())
    path = key_file(paths, name)
    secret.write_private(path, api_key + "\n")
    return path


def check_new_name(found: Profiles, name: str) -> str:
    """`name` if a new profile may take it: a valid name, and none of `found` the same but for case (one file on
    a case-insensitive disk); ConfigError otherwise."""
    check_name(name)
    other = next((n for n in found.names if n.casefold() == name.casefold()), None)
    if other is not None and other != name:
        raise ConfigError(
            f"profile {name} would share its key file with profile {other}: names must differ in more than case"
        )
    return name


def add_key_file_profile(paths: Paths, name: str) -> Path:
    """A new `[profiles.NAME] key_file = true` in config.toml, the rest of the file kept as it was (an inline
    `profiles = {...}` gets an inline entry). Any file it cannot edit is a ConfigError, and left as it was."""
    import tomlkit  # only needed on this rare path

    path = paths.config_file
    try:
        if path.exists():
            raw = read_user_file(path)
            read_config_toml(path)  # refuse to rewrite a file we cannot parse
            doc = tomlkit.parse(raw.decode("utf-8"))
        else:
            doc = tomlkit.document()
        section = doc.get("profiles")
        if section is None:
            section = tomlkit.table(is_super_table=True)
            doc["profiles"] = section
        if isinstance(section, tomlkit.items.InlineTable):
            entry: Any = tomlkit.inline_table()
        else:
            entry = tomlkit.table()
        entry["key_file"] = True
        section[name] = entry
        text = tomlkit.dumps(doc)
        # what would be written is read back first: a file that would not say what was meant is not written
        if name not in profiles_from(path, parse_config_toml(path, text.encode("utf-8"))).by_name:
            raise ConfigError(f"{path} could not be given profile {name}; podtui has not changed it")
    except ConfigError:
        raise
    except NotAFile as e:
        raise ConfigError(str(e)) from None
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror}") from None
    except Exception as e:  # tomlkit stricter than tomllib somewhere, or a shape it will not add to: refuse
        raise ConfigError(f"{path} could not be edited ({type(e).__name__}); podtui has not changed it") from None
    if not path.exists():
        secret.private_dir(path.parent)
    secret.write_private(path, text)
    return path


# --- every profile's burn, for the accounts view and `podtui profiles` ----------------------------------------


@dataclass(frozen=True)
class AccountBurn:
    """One account's money now: what runs, what it burns, its balance and runway; or why it has no figures."""

    profile: str
    source: str  # where its key comes from, in words
    running: int | None = None
    pods: int | None = None
    burn_per_hr: float | None = None
    balance: float | None = None
    runway_s: float | None = None
    balance_unknown_why: str | None = None
    error: str | None = None  # no key, refused, unreachable: the row says it, the others still show
    problem: str | None = None  # the error in a word or two, for a narrow table
    # which RunPod account answered: its id (GraphQL's myself.id), else a digest of the key; None: not known
    account: str | None = None
    same_as: str | None = None  # set by total_burn: the profile listed first that reaches the same account

    @property
    def ok(self) -> bool:
        return self.error is None


def key_digest(api: object) -> str | None:
    """Which key an API was built with, as RestV2's digest of it (two profiles with one key are one account);
    None when the API does not say."""
    digest = getattr(getattr(api, "rest", None), "key_digest", None)
    return f"key {digest}" if isinstance(digest, str) else None


def account_burn(
    profile: str, source: str, api_of: Callable[[str], RunPodApi], now: Callable[[], float]
) -> AccountBurn:
    """One profile's figures, fetched with an API built from its own key (`api_of`); every failure is its row's."""
    from podtui.core.api.errors import ApiAuthError, ApiError, ApiUnavailable
    from podtui.core.cost import cost_view

    try:
        api = api_of(profile)
        snap = api.fetch_snapshot()
    except NoProfileKey as e:
        return AccountBurn(profile, source, error=f"no key: {e}", problem="no key")
    except ConfigError as e:
        return AccountBurn(profile, source, error=str(e), problem="unusable key")
    except ApiAuthError as e:
        return AccountBurn(profile, source, error=f"key refused: {e}", problem="key refused")
    except ApiUnavailable as e:
        return AccountBurn(profile, source, error=str(e), problem="unreachable")
    except ApiError as e:
        return AccountBurn(profile, source, error=str(e), problem="RunPod refused")
    view = cost_view(snap, now())
    running = sum(1 for p in snap.pods if p.state == "RUNNING")
    account_id = snap.account.id  # RunPod's id for the account, when the balance answer had it
    return AccountBurn(
        profile,
        source,
        running=running,
        pods=len(snap.pods),
        burn_per_hr=max(view.burn_per_hr, view.pods_burn_per_hr),
        balance=view.balance,
        runway_s=view.runway_s,
        balance_unknown_why=None if view.balance is not None else view.balance_unknown_why,
        account=f"id {account_id}" if isinstance(account_id, str) and account_id else key_digest(api),
    )


def fetch_account(
    profile: str, source: str, profile_api: Callable[[str], RunPodApi], now: Callable[[], float]
) -> AccountBurn:
    """account_burn with an API of the profile's own key (`profile_api`), closed after: the accounts view and
    `podtui profiles` alike (blocking: in a thread)."""
    made: list[RunPodApi] = []

    def api_of(name: str) -> RunPodApi:
        api = profile_api(name)  # its own key, its own connection
        made.append(api)
        return api

    try:
        return account_burn(profile, source, api_of, now)
    finally:
        for api in made:
            close = getattr(api, "close", None)
            if close is not None:
                close()


def marked_duplicates(rows: Iterable[AccountBurn]) -> list[AccountBurn]:
    """`rows`, each row reaching an account an earlier row reaches marked `same_as` that row's profile (two
    profiles with one key, or two keys of one account: docs/profiles.md#the-accounts-view)."""
    first: dict[str, str] = {}
    out = []
    for r in rows:
        if r.ok and r.account is not None:
            seen = first.setdefault(r.account, r.profile)
            if seen != r.profile:
                r = dataclasses.replace(r, same_as=seen)
        out.append(r)
    return out


def runway_words(row: AccountBurn) -> str:
    """The runway in words: a duration, "∞" when nothing burns, "?" when the balance is unknown."""
    if row.runway_s is not None:
        return units.duration(row.runway_s)
    return "?" if row.balance is None else "∞"


def total_burn(rows: Iterable[AccountBurn]) -> AccountBurn:
    """The sum of the accounts that answered, each account counted once however many profiles reach it. The balance
    is summed only when every one of them has one, and the runway is then the soonest of theirs: money in one
    account does not pay for another's pods."""
    good = [r for r in marked_duplicates(rows) if r.ok and r.same_as is None]
    balances = [r.balance for r in good]
    runways = [r.runway_s for r in good if r.runway_s is not None]
    return AccountBurn(
        "total",
        f"{len(good)} account{'s' if len(good) != 1 else ''}",
        running=sum(r.running or 0 for r in good),
        pods=sum(r.pods or 0 for r in good),
        burn_per_hr=math.fsum(r.burn_per_hr or 0.0 for r in good),
        balance=math.fsum(b for b in balances if b is not None) if good and None not in balances else None,
        runway_s=min(runways) if runways else None,
    )
