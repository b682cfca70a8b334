"""Where podtui keeps its files, following each platform's conventions (platformdirs), and which of them belong to
one account (docs/profiles.md#what-each-profile-keeps)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP_NAME = "podtui"
PROFILES_DIR = "profiles"  # under the data folder: one folder per profile but the default one


@dataclass(frozen=True)
class Paths:
    config_dir: Path  # config.toml and the profiles' key files: podtui's, whatever the account
    log_dir: Path
    # What podtui keeps about one account (the launch memory, the ledger, forwards, transfers, saved logs): the
    # profile's own folder. Without profiles, and for the default profile, podtui's data folder itself.
    data_dir: Path
    profile: str | None = None  # the profile in use; None: no profile (config.toml has none, or none was chosen)
    # podtui's data folder itself, for what every account shares (the pinned host keys); None: data_dir
    home_data_dir: Path | None = None

    @property
    def config_file(self) -> Path:
        return self.config_dir / "config.toml"

    @property
    def log_file(self) -> Path:
        return self.log_dir / "podtui.log"

    @property
    def shared_data_dir(self) -> Path:
        return self.home_data_dir or self.data_dir

    @property
    def account_config_dir(self) -> Path:
        """Config files about one account (the ssh config's Host blocks, one per pod): the config folder for the
        default profile and without profiles, else the profile's folder under it."""
        if self.profile is None or self.home_data_dir is None:
            return self.config_dir
        return self.config_dir / PROFILES_DIR / self.profile

    def keys_dir(self) -> Path:
        """The profiles' key files (`key_file = true`), one 0600 file per profile."""
        return self.config_dir / "keys"

    def for_profile(self, name: str, default: bool) -> Paths:
        """These paths on profile `name`. The default profile keeps podtui's folders as they are, so nothing that
        existed before profiles moves; another profile's data goes to a folder of its own."""
        home = self.shared_data_dir
        if default:
            return dataclasses.replace(self, data_dir=home, profile=name, home_data_dir=None)
        return dataclasses.replace(self, data_dir=home / PROFILES_DIR / name, profile=name, home_data_dir=home)

    def shared(self) -> Paths:
        """These paths with the data folder every account shares (where the host keys pods were pinned with live)."""
        return dataclasses.replace(self, data_dir=self.shared_data_dir, home_data_dir=None)

    def unprofiled(self) -> Paths:
        """podtui's folders as they are without profiles."""
        return dataclasses.replace(self, data_dir=self.shared_data_dir, profile=None, home_data_dir=None)

    @classmethod
    def default(cls) -> Paths:
        return cls(
            config_dir=Path(platformdirs.user_config_dir(APP_NAME)),
            log_dir=Path(platformdirs.user_log_dir(APP_NAME)),
            data_dir=Path(platformdirs.user_data_dir(APP_NAME)),
        )


def runpod_config_file() -> Path:
    """The file runpodctl (`runpodctl config`) and the runpod SDK (`runpod config`) both write."""
    return Path.home() / ".runpod" / "config.toml"
