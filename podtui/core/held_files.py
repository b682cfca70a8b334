"""The files podtui keeps in its data folder (the ledger, the launch memory, the job memory): one holder per file in
this process, so that one lock and one picture of the file serve every caller (two would let one write back what
another had just changed); for the demo, one per run, held in memory and never written: the demo's pods are not the
user's."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from podtui.core.paths import Paths
    from podtui.core.services import Services

H = TypeVar("H")


class OnePerFile(Generic[H]):
    def __init__(self, make: Callable[[Path | None], H], file_name: str) -> None:
        """make: a holder of the file at the path (None: in memory only)."""
        self._make, self._file_name = make, file_name
        self._lock = threading.Lock()
        self._by_file: weakref.WeakValueDictionary[Path, H] = weakref.WeakValueDictionary()
        self._by_demo: weakref.WeakKeyDictionary[Services, H] = weakref.WeakKeyDictionary()

    def for_paths(self, paths: Paths) -> H:
        path = paths.data_dir / self._file_name
        with self._lock:
            held = self._by_file.get(path)
            if held is None:
                held = self._by_file[path] = self._make(path)
            return held

    def for_services(self, services: Services) -> H:
        if not services.demo:
            return self.for_paths(services.paths)
        with self._lock:
            held = self._by_demo.get(services)
            if held is None:
                held = self._by_demo[services] = self._make(None)
            return held
