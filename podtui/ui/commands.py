"""The command palette: every action, with commands that follow the current screen and selection."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from rich.text import Text
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.markup import escape

from podtui.core import actions
from podtui.core.feed import PodFeed
from podtui.core.pod import Pod
from podtui.core.ticker import CostTicker
from podtui.ui import keymap
from podtui.ui.needs import ActsOnPods, Needs, Opens, OpensScreens, RunsTransfers, Served

if TYPE_CHECKING:
    from textual.screen import Screen

    from podtui.transfer.sync.state import SyncSpec
    from podtui.ui.screens.console import ConsoleScreen

Command = tuple[str, Callable[[], object], str]  # the name, what it runs, its help


class PaletteActions(ActsOnPods, Protocol):
    def watchdog(self, pod: Pod, action: str) -> None: ...  # install, status or remove the one on the pod


class PaletteNavigator(OpensScreens, Protocol):
    def selected_pod(self) -> Pod | None: ...
    def run_on_list(self, action: str) -> None: ...  # an action of the pod list, from wherever the user is
    def open_help(self) -> None: ...
    def open_welcome(self) -> None: ...
    def consoles_started(self) -> bool: ...
    def console_screen(self) -> ConsoleScreen: ...
    def open_edit(self, pod: Pod) -> None: ...  # the pod's edit form
    def open_volumes(self) -> None: ...
    def open_templates(self) -> None: ...
    def open_recreate(self) -> None: ...
    def open_spend(self) -> None: ...  # the Spend view


class PaletteJobs(Protocol):
    """The job desk (ui/job_desk.py)."""

    def ask_new(self, pod: Pod) -> None: ...  # the new-job form
    def show(self, pod: Pod) -> None: ...  # the pod's jobs: its pane's Jobs tab, or a screen of their own


class PaletteSyncs(Protocol):
    """The sync desk (ui/sync_desk.py)."""

    def ask(self, pod: Pod, watch: bool = False) -> None: ...  # the sync form
    def again(self, pod: Pod) -> None: ...  # the pod's last sync once more
    def cancel(self, pod: Pod) -> None: ...
    def show(self, pod: Pod) -> None: ...  # the pod's sync: its pane's Sync tab, or a screen of its own
    def busy(self, pod_id: str) -> bool: ...  # a sync or a watch runs
    def last_spec(self, pod_id: str) -> SyncSpec | None: ...


class PaletteNeeds(Served, Opens, Protocol):
    @property
    def feed(self) -> PodFeed: ...
    @property
    def costs(self) -> CostTicker: ...  # which pods have in-app autostop on
    @property
    def pod_actions(self) -> PaletteActions: ...
    @property
    def navigator(self) -> PaletteNavigator: ...
    @property
    def transfers(self) -> RunsTransfers: ...
    @property
    def jobs(self) -> PaletteJobs: ...
    @property
    def syncs(self) -> PaletteSyncs: ...
    def poll_now(self) -> None: ...
    def exit(self) -> None: ...
    def switch_profile(self, name: str) -> None: ...  # the app starts again on that account


class PodCommands(Provider):
    needs = Needs[PaletteNeeds]()

    def _commands(self) -> list[Command]:
        app, go, acts = self.needs, self.needs.navigator, self.needs.pod_actions
        keys = partial(keymap.fill, self.app)  # "{pods.doctor}" is the key in effect, remapped or not
        out: list[Command] = []
        out += self._console_commands(go, self.screen)
        pod = go.selected_pod()
        if pod is not None:
            out.append(
                (
                    f"Open a console on {pod.name}",
                    partial(go.open_console, pod),
                    "a terminal into the pod, in its pane (or a screen of its own)",
                )
            )
            # only what RunPod offers for this pod now (its `actions`)
            for verb in () if app.read_only else [v for v in actions.VERBS if actions.offered(v, pod)]:
                out.append(
                    (
                        f"{verb.capitalize()} {pod.name}",
                        partial(acts.request, verb, pod),
                        f"{verb} the selected pod ({pod.id}), after confirmation",
                    )
                )
            if not app.read_only:
                out.append(
                    (
                        f"Edit {pod.name}",
                        partial(go.open_edit, pod),
                        keys("name, image, ports, disk, env, lock; the changes shown first ({pods.edit})"),
                    )
                )
            out.append((f"Details of {pod.name}", partial(go.open_details, pod.id), "ports, SSH commands, env"))
            out.append(
                (
                    f"Doctor: check {pod.name}'s environment",
                    partial(go.open_doctor, pod),
                    keys(
                        "python/python3, torch, CUDA, GPU, transformers, disk, runpodctl, HF login, with fixes "
                        "({pods.doctor})"
                    ),
                )
            )
            if not app.read_only:
                out.append(
                    (
                        f"New job on {pod.name}",
                        partial(app.jobs.ask_new, pod),
                        "a command run detached: it survives podtui and SSH; then pulls, and a stop or terminate",
                    )
                )
            out.append(
                (
                    f"Jobs of {pod.name}",
                    partial(app.jobs.show, pod),
                    keys("its detached jobs: state, exit code, cost, logs; cancel one ({pods.jobs})"),
                )
            )
            out += self._sync_commands(app.syncs, pod, keys)
            out.append(
                (
                    f"Transfer a file to or from {pod.name}",
                    app.transfers.ask,
                    "upload or download, verified by checksum on both ends",
                )
            )
            on = pod.id in app.costs.autostop_pods
            out.append(
                (
                    f"{'Turn off' if on else 'Turn on'} in-app autostop for {pod.name}",
                    partial(acts.toggle_autostop, pod),
                    keys("stop it after a countdown once idle ({pods.autostop})"),
                )
            )
            for action, what in (
                ("install", "stops the pod when idle, even with this machine off"),
                ("status", "is the watchdog on the pod installed and running?"),
                ("remove", "stop and delete the watchdog"),
            ):
                out.append((f"Autostop watchdog on {pod.name}: {action}", partial(acts.watchdog, pod, action), what))
        out += [
            ("Filter pods", partial(go.run_on_list, "filter"), "type words to narrow the list"),
            ("Clear filter", partial(go.run_on_list, "clear_filter"), "show every pod"),
            ("Sort by next column", partial(go.run_on_list, "sort(False)"), "cycle the sort column"),
            ("Reverse sort order", partial(go.run_on_list, "sort(True)"), "flip ascending/descending"),
            ("Refresh now", app.poll_now, "fetch pods from RunPod right away"),
            ("Show transfers", app.transfers.show, "the transfer queue: progress, checksums, logs"),
            (
                "Hugging Face: check a repo, download it on a pod",
                go.open_hf_check,
                keys(
                    "token, gated access (license or token scope), size; then the pod downloads it, verified "
                    "({pods.hf})"
                ),
            ),
            (
                "GPU advisor: which GPU fits a model",
                go.open_gpus,
                keys("VRAM, prices and stock; cheapest fit ({pods.gpus})"),
            ),
            (
                "Create a pod",
                go.open_create_pod,
                keys("GPU, image, disks, env; cost per hour shown first ({pods.create})"),
            ),
            (
                "Network volumes",
                go.open_volumes,
                keys("size, data centre, $/month, pods using each; create, grow, rename, delete ({pods.volumes})"),
            ),
            (
                "Templates: a pod from one, one from a pod",
                go.open_templates,
                keys("yours or RunPod's public ones ({pods.templates})"),
            ),
            (
                "Recreate a pod as it was",
                go.open_recreate,
                keys("pods podtui has seen, terminated ones too; cost shown first ({pods.recreate})"),
            ),
            (
                "Spend: what was spent",
                go.open_spend,
                "today, 7 or 30 days: per day, by pod, GPU type or network volume",
            ),
            *self._account_commands(app),
            ("Help: keys", go.open_help, "every key podtui knows"),
            ("SSH key setup", go.open_ssh_key, "a dedicated key, registered on the RunPod account"),
            ("RunPod API key", go.open_welcome, "enter or replace the key (checked with RunPod, stored 0600)"),
            ("Quit podtui", app.exit, "pods keep running (and billing)"),
        ]
        snap = app.feed.snapshot
        if snap is not None:
            for p in snap.pods:
                out.append((f"Open pod {p.name}", partial(go.open_details, p.id), f"{p.id} · {p.gpu_label}"))
        return out

    @staticmethod
    def _sync_commands(syncs: PaletteSyncs, pod: Pod, keys: Callable[[str], str]) -> list[Command]:
        """Sync a folder with the pod; again as last time, or cancel, when that applies (docs/sync.md)."""
        out: list[Command] = [
            (
                f"Sync a folder with {pod.name}",
                partial(syncs.ask, pod),
                "copy what changed, verified by sha256 on both ends; push or pull, delete, excludes, watch",
            ),
            (
                f"Sync of {pod.name}",
                partial(syncs.show, pod),
                keys("what changed, what is in flight, the last result ({pods.sync})"),
            ),
        ]
        last = syncs.last_spec(pod.id)
        if syncs.busy(pod.id):
            out.append((f"Cancel the sync with {pod.name}", partial(syncs.cancel, pod), "stops between files"))
        elif last is not None:
            out.append(
                (f"Sync {pod.name} again", partial(syncs.again, pod), f"{last.direction} {last.local} as last time")
            )
        return out

    @staticmethod
    def _account_commands(app: PaletteNeeds) -> list[Command]:
        """The other profiles to switch to, and the view of every profile's burn (docs/profiles.md#switching)."""
        services = app.services
        on = f"now on {services.profile}" if services.profile is not None else "now on no profile"
        out: list[Command] = [
            (
                f"Switch to profile {name}",
                partial(app.switch_profile, name),
                f"the app starts again on that account ({on}; key from {source})",
            )
            for name, source in services.profiles.items()
            if name != services.profile
        ]
        if not services.profiles:
            return out  # without profiles there is one account, and the ticker shows it
        out.append(
            (
                "Accounts: burn of every profile",
                partial(PodCommands._open_accounts, app),
                "each profile's pods running, $/hr, balance and runway, and their sum",
            )
        )
        return out

    @staticmethod
    def _open_accounts(app: PaletteNeeds) -> None:
        from podtui.ui.screens.accounts import AccountsScreen

        app.open_screen(AccountsScreen(), ("accounts",))

    @staticmethod
    def _console_commands(go: PaletteNavigator, origin: Screen[Any]) -> list[Command]:
        """origin: the screen the palette was opened on (the palette itself is app.screen now)."""
        if not go.consoles_started():
            return []
        screen = go.console_screen()
        out: list[Command] = []
        if origin is screen and screen.current is not None:
            label = screen.current.link.label
            out += [
                (f"Save console output of {label}", screen.action_save, "scrollback and screen, as plain text"),
                (f"Reconnect console on {label}", screen.action_reconnect, "open a fresh shell in this tab"),
                (f"Close console on {label}", screen.action_close_console, "ends its shell (asks first)"),
            ]
        if screen.views():
            out.append(("Show consoles", go.show_consoles, f"{len(screen.views())} open"))
        return out

    async def discover(self) -> Hits:
        for name, run, help_text in self._commands():
            # pod names are data: Rich Text is shown as is, and help is escaped (the palette parses markup)
            yield DiscoveryHit(Text(name), run, text=name, help=escape(help_text))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, run, help_text in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, Text(name), run, text=name, help=escape(help_text))
