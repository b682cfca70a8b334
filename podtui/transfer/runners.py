"""Which runner runs a job: chosen by the job's direction, the only place that looks at it to decide how a
transfer runs."""

from __future__ import annotations

from podtui.transfer.hf_download import HfDownload
from podtui.transfer.job import Direction
from podtui.transfer.pull import FilePull
from podtui.transfer.push import FilePush
from podtui.transfer.runner import TransferRunner

RUNNERS: dict[Direction, TransferRunner] = {"push": FilePush(), "pull": FilePull(), "hub": HfDownload()}


def runner_for(direction: Direction) -> TransferRunner:
    return RUNNERS[direction]
