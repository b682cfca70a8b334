"""The pod's end of a sync: its folder listed, files hashed, the working folder, and the changes made, each in one
batch through its shell (docs/sync.md#verification, docs/sync.md#deleting)."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence

from podtui.transfer.sync.ignore import IgnoreRules
from podtui.transfer.sync.ops import Applied, Ops
from podtui.transfer.sync.pod_batch import PodBatchError, PodTemp, decoded, nul_list, said
from podtui.transfer.sync.remote_scan import scan_remote
from podtui.transfer.sync.tree import STAGE_PREFIX, Scan, time_arg

HASH_BYTES_PER_S = 20e6  # a slow disk's hashing speed, for the command's time limit
GROUP = 500  # names per `mv -t`: far below the kernel's limit on a command's arguments
STALE_MIN = 60  # working folders where nothing changed for this long are an earlier sync's that died

_HASH_SCRIPT = (
    # coreutils before 8.30 has no `sha256sum -z` (nor has busybox): said as such, not as files that failed
    'sha256sum -z < /dev/null > /dev/null 2>&1 || { echo "podtui-hash-old"; exit 0; }; '
    'cd -- "$R" || exit 3; xargs -0 -r sha256sum -z -- < "$T/in/hash" > "$T/hash" 2> "$T/hash-e"; '
    'echo "podtui-hashed $? $(stat -c %s -- "$T/hash") $(head -c 500 -- "$T/hash-e" | base64 -w0)"'
)
_STAGE_SCRIPT = (
    'mkdir -p -- "$R" 2>/dev/null; cd -- "$R" || { echo "podtui-stage-failed"; exit 0; }; '
    # a working folder is an earlier sync's that died when nothing in it changed for STALE_MIN minutes: one that a
    # sync still writes in (a long file arriving chunk by chunk) is left to it
    f'for d in ./{STAGE_PREFIX}*; do [ -d "$d" ] && [ ! -L "$d" ] || continue; '
    f'[ -z "$(find "$d" -mmin -{STALE_MIN} -print -quit 2>/dev/null)" ] && rm -rf -- "$d"; done; '
    f's=$(mktemp -d "./{STAGE_PREFIX}XXXXXX") && mkdir -- "$s/u" && echo "podtui-stage ${{s#./}}"'
)
# Each list is NUL-separated; a failure is said as `podtui-F LIST INDEX` (a group's as G.J): only builtins run per
# name, the commands run once per list (or per folder's group), never once per file (docs/sync.md#routes).
_APPLY_SCRIPT = r"""
cd -- "$R" || { echo "podtui-applied-noroot"; exit 0; }
E="$T/apply-e"; : > "$E"; I="$T/in"
say() { printf 'podtui-F %s %s\n' "$1" "$2"; }
there() { [ -e "$1" ] || [ -L "$1" ]; }
if [ -s "$I/delete" ]; then
  xargs -0 rm -f -- < "$I/delete" 2>>"$E"
  i=0; while IFS= read -r -d '' p; do there "$p" && say delete $i; i=$((i+1)); done < "$I/delete"
fi
if [ -s "$I/rmdir" ]; then
  xargs -0 rmdir -- < "$I/rmdir" 2>/dev/null
  i=0; while IFS= read -r -d '' p; do [ -d "$p" ] && say rmdir $i; i=$((i+1)); done < "$I/rmdir"
fi
if [ -s "$I/mkdir" ]; then
  xargs -0 mkdir -p -- < "$I/mkdir" 2>>"$E"
  i=0; while IFS= read -r -d '' p; do { [ -d "$p" ] && [ ! -L "$p" ]; } || say mkdir $i; i=$((i+1)); done < "$I/mkdir"
fi
if [ -s "$I/stimes" ]; then
  while IFS= read -r -d '' p && IFS= read -r -d '' m; do touch -c -h -d "@$m" -- "$p" 2>>"$E"; done < "$I/stimes"
fi
if [ -s "$I/smodes" ]; then
  while IFS= read -r -d '' p && IFS= read -r -d '' m; do chmod "$m" -- "$p" 2>>"$E"; done < "$I/smodes"
fi
if [ -s "$I/singles" ]; then
  i=0
  while IFS= read -r -d '' p && IFS= read -r -d '' f; do
    mv -f -T -- "$p" "$f" 2>>"$E" || say single $i; i=$((i+1))
  done < "$I/singles"
fi
if [ -s "$I/groups" ]; then
  g=0; exec 3< "$I/groups"
  while IFS= read -r -u 3 -d '' d && IFS= read -r -u 3 -d '' n; do
    a=(); j=0
    while [ $j -lt "$n" ]; do IFS= read -r -u 3 -d '' x; a+=("$x"); j=$((j+1)); done
    mv -f -t "${d:-.}" -- "${a[@]}" 2>>"$E"
    j=0; for x in "${a[@]}"; do there "$x" && say group "$g.$j"; j=$((j+1)); done
    g=$((g+1))
  done
  exec 3<&-
fi
if [ -s "$I/links" ]; then
  i=0
  while IFS= read -r -d '' f && IFS= read -r -d '' t; do
    if [ -d "$f" ] && [ ! -L "$f" ]; then say link $i; else ln -sfn -- "$t" "$f" 2>>"$E" || say link $i; fi
    i=$((i+1))
  done < "$I/links"
fi
if [ -s "$I/times" ]; then
  i=0
  while IFS= read -r -d '' f && IFS= read -r -d '' m; do
    touch -c -h -d "@$m" -- "$f" 2>>"$E" || say time $i; i=$((i+1))
  done < "$I/times"
fi
if [ -s "$I/modes" ]; then
  i=0
  while IFS= read -r -d '' f && IFS= read -r -d '' m; do
    chmod "$m" -- "$f" 2>>"$E" || say mode $i; i=$((i+1))
  done < "$I/modes"
fi
echo "podtui-applied $(head -c 1000 -- "$E" | base64 -w0)"
"""
_FAILED = re.compile(r"^podtui-F (\w+) (\d+(?:\.\d+)?)$", re.MULTILINE)
_WHY = {
    "delete": "could not be deleted",
    "mkdir": "could not make the folder (is something else in the way?)",
    "single": "could not be put in place",
    "group": "could not be put in place",
    "link": "could not make the symlink",
    "time": "could not set its time",
    "mode": "could not set its executable bit",
}


def _pairs(pairs: Sequence[tuple[str, str | int]], octal: bool = False) -> bytes:
    out = []
    for a, b in pairs:
        out += [a, f"{b:o}" if octal and isinstance(b, int) else time_arg(b) if isinstance(b, int) else b]
    return nul_list(out)


class PodEnd:
    """The pod's folder (temp.root) as one end of a sync."""

    def __init__(self, temp: PodTemp, check: Callable[[], None] | None = None) -> None:
        self.temp = temp
        self.root = temp.root
        self.check = check
        self.stage: str | None = None  # the working folder, relative to the root

    def scan(self, own: IgnoreRules, by: IgnoreRules | None = None) -> Scan:
        return scan_remote(self.temp, own, by, self.check)

    def hash(self, paths: Sequence[str], total_bytes: int = 0) -> dict[str, str]:
        """sha256 of each path (relative to the root) the pod could read; one command for all of them."""
        if not paths:
            return {}
        self.temp.put({"hash": nul_list(list(paths))})
        result = self.temp.run(_HASH_SCRIPT, 120 + total_bytes / HASH_BYTES_PER_S)
        if said(result.output, "hash-old") is not None:
            raise PodBatchError("sha256sum on the pod is too old to hash any name (-z needs coreutils 8.30 or later)")
        answer = said(result.output, "hashed")
        if answer is None or len(answer) < 2 or not answer[1].isdigit():
            raise PodBatchError(f"sha256sum on the pod did not answer: {result.output.strip()[-200:] or 'nothing'}")
        data = self.temp.get("hash", int(answer[1]))  # a file that is not there is left out: its caller says so
        found = {}
        for record in data.split(b"\0"):
            if len(record) > 66 and record[64:66] in (b"  ", b" *"):
                found[record[66:].decode("utf-8", "surrogateescape")] = record[:64].decode("ascii", "replace")
        return found

    def open_stage(self) -> str:
        """Make the folder (a push makes it), clear working folders of syncs that died, and make this one's."""
        result = self.temp.run(_STAGE_SCRIPT, 120)
        answer = said(result.output, "stage")
        if not answer or not re.fullmatch(rf"{re.escape(STAGE_PREFIX)}[A-Za-z0-9]+", answer[0]):
            raise PodBatchError(
                f"cannot make {self.root} or a working folder in it on the pod: "
                f"{result.output.strip()[-200:] or 'no answer'}"
            )
        self.stage = answer[0]
        return self.stage

    def close_stage(self) -> None:
        if self.stage is not None:
            self.temp.run(f'rm -rf -- "$R"/{shlex.quote(self.stage)}', 300)
            self.stage = None

    def apply(self, ops: Ops) -> Applied:
        """Carry out `ops` in order; what could not be done, by path."""
        done = Applied()
        if ops.empty:
            return done
        groups: list[tuple[str, list[tuple[str, str]]]] = []
        for folder, moves in ops.groups:
            groups += [(folder, moves[i : i + GROUP]) for i in range(0, len(moves), GROUP)]
        flat: list[str] = []
        for folder, moves in groups:
            flat += [folder, str(len(moves)), *(src for src, _ in moves)]
        lists = {
            "delete": nul_list(ops.delete),
            "rmdir": nul_list(ops.rmdir),
            "mkdir": nul_list(ops.mkdir),
            "stimes": _pairs(ops.staged_times),
            "smodes": _pairs(ops.staged_modes, octal=True),
            "singles": _pairs(ops.singles),
            "groups": nul_list(flat),
            "links": _pairs(ops.links),
            "times": _pairs(ops.times),
            "modes": _pairs(ops.modes, octal=True),
        }
        self.temp.put({name: data for name, data in lists.items() if data})
        count = len(ops.delete) + len(ops.mkdir) + len(ops.singles) + sum(len(m) for _, m in ops.groups)
        result = self.temp.run(_APPLY_SCRIPT, 300 + count * 0.05)
        answer = said(result.output, "applied")
        if answer is None:
            raise PodBatchError(
                f"the changes in {self.root} on the pod did not finish: {result.output.strip()[-200:] or 'no answer'}"
            )
        pod_said = decoded(answer[0]).strip().splitlines() if answer else []
        tail = f" (the pod said: {pod_said[0][:200]})" if pod_said else ""
        for m in _FAILED.finditer(result.output):
            listed, index = m.group(1), m.group(2)
            if listed == "rmdir":
                done.kept.append(ops.rmdir[int(index)])
                continue
            if listed == "group":
                g, j = (int(x) for x in index.split("."))
                path = groups[g][1][j][1]
            else:
                path = {
                    "delete": ops.delete,
                    "mkdir": ops.mkdir,
                    "single": [f for _, f in ops.singles],
                    "link": [f for f, _ in ops.links],
                    "time": [f for f, _ in ops.times],
                    "mode": [f for f, _ in ops.modes],
                }[listed][int(index)]
            done.failed.setdefault(path, _WHY[listed] + tail)
        return done
