"""A job's spec from what was typed into the TUI's new-job form, each field checked and refused in words
(docs/jobs.md#after-a-job). The command goes to the pod as typed; what is checked here is what podtui itself acts
on: the name it shows, the folder it runs in, and the paths it brings home once the job ends."""

from __future__ import annotations

from podtui.core.jobs.job import JobSpec, Pull, Then
from podtui.core.visible import visible

MAX_COMMAND = 64 << 10  # far more than a command line needs; the pod's shell reads it from a file
MAX_NAME = 64
MAX_PULLS = 32
MAX_PATH = 4096


class SpecProblem(ValueError):
    """A field that cannot be used; the text says why, and the field is named by `field`."""

    def __init__(self, field: str, text: str) -> None:
        super().__init__(text)
        self.field = field


def _clean(text: str) -> bool:
    """Nothing in it a terminal or a shell's line would act on: every character prints as itself."""
    return visible(text) == text


def check_command(text: str) -> str:
    command = text.strip()
    if not command:
        raise SpecProblem("command", "type the command to run, as you would in the pod's shell")
    if "\x00" in command:
        raise SpecProblem("command", "the command holds a NUL character, which no shell can run")
    if len(command.encode("utf-8")) > MAX_COMMAND:
        raise SpecProblem("command", f"the command is longer than {MAX_COMMAND:,} bytes: put it in a script")
    return command


def check_name(text: str) -> str | None:
    name = text.strip()
    if not name:
        return None
    if not _clean(name):
        raise SpecProblem("name", "the name may hold no control characters")
    if len(name) > MAX_NAME:
        raise SpecProblem("name", f"the name is longer than {MAX_NAME} characters")
    return name


def check_workdir(text: str) -> str | None:
    """The folder it runs in, as `podtui run --workdir` takes it: from / or ~, or relative to /workspace."""
    workdir = text.strip()
    if not workdir:
        return None
    if not _clean(workdir):
        raise SpecProblem("workdir", "the folder may hold no control characters")
    if len(workdir) > MAX_PATH:
        raise SpecProblem("workdir", f"the folder's path is longer than {MAX_PATH} characters")
    return workdir


def terminate_problem(then: Then | None, pulls: tuple[Pull, ...], network_volume: str | None) -> str | None:
    """Terminating deletes the pod's volume: with nothing pulled and no network volume, everything the job wrote
    goes with it (docs/jobs.md#after-a-job). None when that is not so."""
    if then != "terminate" or pulls or network_volume:
        return None
    return "terminating would delete everything the job writes: add a pull for what to keep, or stop the pod"


def parse_pull(text: str) -> Pull:
    """One `REMOTE[:LOCAL]`, as `podtui run --pull` takes it: REMOTE on the pod (relative to the job's folder, or
    from / or ~), LOCAL here (left out: into the current folder). ValueError in words when it is not a path."""
    line = text.strip()
    remote, sep, local = line.partition(":")
    remote, local = remote.strip(), local.strip()
    if not remote:
        raise ValueError(f"{visible(line)!r}: the path on the pod is missing (REMOTE or REMOTE:LOCAL)")
    if not _clean(remote) or not _clean(local):
        raise ValueError(f"{visible(line)!r}: a path may hold no control characters")
    if remote.strip("/") in ("", ".", "..") or remote in ("~", "~/"):
        raise ValueError(f"{visible(line)!r}: name the file or folder to bring home, not the pod's whole disk")
    if sep and not local:
        raise ValueError(f"{visible(line)!r}: the path here after ':' is missing (or leave out the ':')")
    return Pull(remote, local or None)


def parse_pulls(text: str) -> tuple[Pull, ...]:
    """One pull per line; blank lines are skipped."""
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) > MAX_PULLS:
        raise SpecProblem("pulls", f"at most {MAX_PULLS} pulls (a folder brings everything under it)")
    pulls = []
    for line in lines:
        try:
            pulls.append(parse_pull(line))
        except ValueError as e:
            raise SpecProblem("pulls", str(e)) from None
    return tuple(pulls)


def typed_spec(command: str, name: str, workdir: str, then: Then | None, pulls: str) -> JobSpec:
    """The spec, or the first SpecProblem."""
    return JobSpec(check_command(command), check_name(name), check_workdir(workdir), then, parse_pulls(pulls))


def problems(
    command: str, name: str, workdir: str, pulls: str, then: Then | None = None, network_volume: str | None = None
) -> dict[str, str]:
    """Every field's problem at once, for the form to mark them all."""
    out: dict[str, str] = {}
    for field, check in (
        ("command", lambda: check_command(command)),
        ("name", lambda: check_name(name)),
        ("workdir", lambda: check_workdir(workdir)),
        ("pulls", lambda: parse_pulls(pulls)),
    ):
        try:
            check()
        except SpecProblem as e:
            out[field] = str(e)
    if "pulls" not in out:
        lost = terminate_problem(then, parse_pulls(pulls), network_volume)
        if lost is not None:
            out["then"] = lost
    return out
