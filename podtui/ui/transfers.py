"""The app's side of the transfer queue: built on first use (the transfer code loads paramiko, which the first
frame must not wait for), its changes carried to the event loop as messages, and "then terminate" answered."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, cast

from podtui.core.visible import visible
from podtui.ui.messages import TerminateHeld, TerminateReady, TransferChanged, TransferRemoved

if TYPE_CHECKING:
    from podtui.transfer.job import TransferJob
    from podtui.transfer.queue import TransferQueue
    from podtui.ui.app import PodtuiApp
    from podtui.ui.screens.transfers import TransfersScreen


class TransfersMixin:
    """Mixed into PodtuiApp."""

    transfer_history: Path | None
    transfer_work_dir: Path | None
    runpodctl: Callable[[], str | None]
    _transfer_queue: TransferQueue | None = None

    @property
    def _app(self) -> PodtuiApp:
        return cast("PodtuiApp", self)

    def transfer_queue(self) -> TransferQueue:
        if self._transfer_queue is None:
            import tempfile

            from podtui.core.api.client import find_pod
            from podtui.transfer.engine import TransferContext
            from podtui.transfer.history import TransferHistory
            from podtui.transfer.queue import TransferQueue

            app = self._app
            work = self.transfer_work_dir or Path(tempfile.mkdtemp(prefix="podtui-transfer-"))
            ctx = TransferContext(lambda pod_id: find_pod(app.api, pod_id), app.ssh_settings, work,
                                  self.runpodctl(), hf_token=app.hf_token_value, hf_endpoint=app.hf_endpoint)
            history = TransferHistory(self.transfer_history) if self.transfer_history else None

            def changed(job: TransferJob) -> None:  # on a worker thread: post_message is thread-safe
                app.post_message(TransferChanged(job))

            def removed(job_id: str) -> None:
                app.post_message(TransferRemoved(job_id))

            def terminate_ready(pod_id: str, name: str, confirmed: bool) -> None:
                app.post_message(TerminateReady(pod_id, name, confirmed))

            def terminate_held(pod_id: str, name: str, why: str) -> None:
                app.post_message(TerminateHeld(pod_id, name, why))

            self._transfer_queue = TransferQueue(ctx, history, on_change=changed, on_terminate_ready=terminate_ready,
                                                 read_only=app.read_only, on_removed=removed,
                                                 on_terminate_held=terminate_held)
            if history is not None and history.problem:
                app.notify(visible(history.problem), severity="warning", timeout=15, markup=False)
            self._transfer_queue.start()
        return self._transfer_queue

    def resume_transfers(self) -> None:
        """Soon after start-up: transfers queued in an earlier run go on (and interrupted ones are listed)."""
        if self._transfer_queue is None and self.transfer_history is not None and self.transfer_history.exists():
            self.transfer_queue()

    def unverified_transfers(self, pod_id: str) -> list[TransferJob]:
        """Transfers from or to the pod that are not verified and not given up: what terminating would lose."""
        if self._transfer_queue is None:
            return []
        return [j for j in self._transfer_queue.jobs() if j.pod_id == pod_id and j.state not in ("verified",
                                                                                                 "cancelled")]

    def transferring_pods(self) -> set[str]:
        if self._transfer_queue is None:
            return set()
        return {j.pod_id for j in self._transfer_queue.jobs() if j.state not in ("verified", "failed", "cancelled")}

    def transfer_jobs(self) -> list[TransferJob]:
        return self.transfer_queue().jobs()

    def close_transfers(self) -> None:
        if self._transfer_queue is not None:
            self._transfer_queue.close()

    def transfers_screen(self) -> TransfersScreen:
        from podtui.ui.screens.transfers import TransfersScreen

        app = self._app
        if not app.is_screen_installed("transfers"):
            app.install_screen(TransfersScreen(), "transfers")
        return cast("TransfersScreen", app.get_screen("transfers"))

    def show_transfers(self) -> None:
        self._app.open_screen(self.transfers_screen(), ("transfers",))

    def ask_for_transfer(self) -> None:
        from podtui.ui.screens.add_transfer import AddTransferScreen

        app = self._app
        pods = app.feed.snapshot.pods if app.feed.snapshot is not None else []

        def answered(job: TransferJob | None) -> None:
            if job is not None:
                self.transfer_queue().add(job)
                self.show_transfers()

        app.open_screen(AddTransferScreen(list(pods), app.selected_pod()), ("add-transfer",), answered)

    def on_transfer_changed(self, message: TransferChanged) -> None:
        from podtui.transfer.job import TransferJob

        job = message.job
        assert isinstance(job, TransferJob)
        app = self._app
        screen = self.transfers_screen() if app.is_screen_installed("transfers") else None
        if screen is not None and screen.is_mounted:
            screen.show_job(job)
        mine = self._transfer_queue is None or self._transfer_queue.mine(job)  # another podtui's: it says so
        if mine and job.state in ("verified", "failed") and app.screen is not screen:
            verb = "verified" if job.state == "verified" else f"failed: {job.error}"
            app.notify(visible(f"{job.label}: {verb}"), severity="information" if job.state == "verified"
                       else "error", markup=False, timeout=8)

    def on_transfer_removed(self, message: TransferRemoved) -> None:
        app = self._app
        if app.is_screen_installed("transfers"):
            self.transfers_screen().forget_job(message.job_id)

    def on_terminate_held(self, message: TerminateHeld) -> None:
        # said once per holding transfer (the queue sees to it); the pane's detail line says it while it lasts
        self._app.notify(visible(f"then terminate held: {message.why}"), severity="warning", timeout=15,
                         markup=False)

    def on_terminate_ready(self, message: TerminateReady) -> None:
        app = self._app
        pod = next((p for p in app.feed.snapshot.pods if p.id == message.pod_id), None) \
            if app.feed.snapshot is not None else None
        if pod is None:
            app.notify(f"downloads from {visible(message.pod_name)} verified; the pod is no longer listed",
                       markup=False)
            return
        name = visible(pod.name)
        if app.read_only:
            app.notify(f"downloads from {name} verified; read-only mode, so it is not terminated", markup=False)
            return
        if message.confirmed:
            app.notify(f"downloads from {name} verified: terminating it, as you asked", markup=False)
            app.start_action("terminate", pod)
            return
        app.notify(f"every download marked \"then terminate\" from {name} is verified", markup=False)

        def answered(yes: bool | None) -> None:
            if yes:
                app.start_action("terminate", pod)

        app.open_screen(app.terminate_screen(pod, unasked=True), ("terminate", pod.id), answered)

