"""Where podtui keeps its files, following each platform's conventions (platformdirs)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP_NAME = "podtui"


@dataclass(frozen=True)
class Paths:
    config_dir: Path
    log_dir: Path
    data_dir: Path

    @property
    def config_file(self) -> Path:
        return self.config_dir / "config.toml"

    @property
    def log_file(self) -> Path:
        return self.log_dir / "podtui.log"

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
