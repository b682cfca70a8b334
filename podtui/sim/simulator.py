"""The whole simulated RunPod: the API, the SSH gateway, direct SSH for pods that expose it, and the pods' HTTP
services behind RunPod's proxy (docs/services.md#the-simulators-services-and-proxy)."""

from __future__ import annotations

import atexit
import logging
import queue
import shutil
import threading
from pathlib import Path

from podtui.sim.gateway import SimGateway
from podtui.sim.hub import SimHub
from podtui.sim.pod_services import PodServices
from podtui.sim.pod_view import namespaces_work
from podtui.sim.podshell import INTERNET_ENV, RUNNING, kill_leftovers
from podtui.sim.proxy import SimProxy
from podtui.sim.relay import SimRelay
from podtui.sim.server import SimApiServer
from podtui.sim.sim_folder import end_containers, make_sim_folder
from podtui.sim.sshd import PodSshd, sshd_available
from podtui.sim.world import SimPod, World

log = logging.getLogger(__name__)

# How long a stopped or terminated pod's container runs on after the API has answered: a container takes a
# moment to stop, and a watchdog that stops its own pod sees the answer (and says so in its log) first.
STOP_GRACE_S = 3.0


class Simulator:
    """isolated: each pod in a container of its own (pod_view.py); None: wherever this machine allows it.
    Without `root`, it makes its own temporary folder, removes it when it stops (or at exit), and a start after a
    killed run removes the one that run left."""

    def __init__(
        self,
        world: World,
        root: Path | None = None,
        direct_ssh: bool | None = None,
        isolated: bool | None = None,
        api: SimApiServer | None = None,
    ) -> None:
        self.world = world
        self._own_root = root is None
        self.root = root or make_sim_folder()
        if self._own_root:
            atexit.register(self._remove_root)  # an exit that never reaches stop() takes the folder all the same
        self.isolated = namespaces_work() if isolated is None else isolated
        self.api = api or SimApiServer(world)  # `podtui sim` brings one on its own port and key
        self.relay = SimRelay()  # runpodctl send/receive on the pods meet here
        self.hub = SimHub()  # the Hugging Face Hub the pods (and `podtui hf --demo`) reach
        # each running pod's HTTP ports, on its own loopback address, and RunPod's proxy in front of them; the
        # services take the API's fault switches of their kind (slow_service)
        self.services = PodServices(world, self.api.faults)
        self.proxy = SimProxy(world, self.services)
        self._gateway: SimGateway | None = None
        self._ssh_ready = threading.Event()
        self._ssh_error: BaseException | None = None
        self.direct_ssh = sshd_available() if direct_ssh is None else direct_ssh
        self.sshds: dict[str, PodSshd] = {}
        # New pods' sshds start on one long-lived thread: sshd dies with the thread that started it
        # (PR_SET_PDEATHSIG is per thread), and API request threads end as soon as they answer.
        self._new_direct: queue.Queue[SimPod | None] = queue.Queue()
        self._new_direct_thread: threading.Thread | None = None
        self.stop_grace_s = STOP_GRACE_S
        self._ending: dict[str, threading.Timer] = {}  # pod id -> its container's end, pending
        self._ending_lock = threading.Lock()

    @property
    def proxy_url(self) -> str:
        """The proxy's URL template, `http://127.0.0.1:PORT/{pod_id}-{port}/`: podtui's `proxy_url` for this
        simulator (RunPod's proxy.runpod.net names cannot resolve here)."""
        return self.proxy.url_template

    def serve_account(self, world: World, api_key: str | None = None) -> SimApiServer:
        """Another account on this simulator's API address, answering requests with its own key (the demo's "team",
        docs/profiles.md#the-demo): its API only, its pods without containers, SSH or services."""
        return self.api.serve_account(world, api_key)

    def service_address(self, pod_id: str, port: int) -> tuple[str, int] | None:
        """Where the pod's service for HTTP port `port` listens now (the pod's own address); None while it is down."""
        return self.services.address(pod_id, port)

    @property
    def gateway(self) -> SimGateway:
        self.wait_ssh_ready()
        assert self._gateway is not None
        return self._gateway

    def start(self, background_ssh: bool = False) -> Simulator:
        """Start the API at once; the SSH side (gateway, one sshd per direct pod) now or, for the demo, in
        the background, as a real pod's ports appear a moment after it is listed."""
        self.root.mkdir(parents=True, exist_ok=True)
        self.relay.start()
        self.api.start()
        self.hub.start()
        self.proxy.start()
        (self.root / "pods").mkdir(parents=True, exist_ok=True)  # the pods have internet: the Hub is here
        (self.root / "pods" / INTERNET_ENV).write_text(
            f"HF_ENDPOINT={self.hub.endpoint}\nHF_HUB_DISABLE_TELEMETRY=1\nHF_HUB_DISABLE_UPDATE_CHECK=1\n"
        )
        with self.world.lock:  # the pods running now started with the account's keys as they are now
            for pod in self.world.pods.values():
                self.world.container_keys(pod)
            self.world.unisolated_root = None if self.isolated else str(self.root / "pods")
        self.world.pod_started_listeners.append(self._pod_started)
        self.world.pod_created_listeners.append(self._pod_created)
        self.world.pod_stopped_listeners.append(self._pod_stopped)
        for pod in [p for p in self.world.pods.values() if p.status in RUNNING]:
            self.services.start_pod(pod)
        wanted = [p for p in self.world.pods.values() if p.direct_ssh_port is not None]
        for pod in wanted:
            pod.direct_ssh_port = None  # until its sshd listens
        if background_ssh:
            # this thread lives as long as the simulator: the sshds it starts die with it (PR_SET_PDEATHSIG)
            self._new_direct_thread = threading.Thread(
                target=self._ssh_thread, args=(wanted,), name="sim-sshd", daemon=True
            )
            self._new_direct_thread.start()
        else:
            self._start_ssh(wanted)
            if self._ssh_error is not None:
                raise self._ssh_error
        return self

    def _start_ssh(self, wanted: list[SimPod]) -> None:
        try:
            self._gateway = SimGateway(
                self.world,
                self.root / "pods",
                self.api.url,
                self.api.api_key,
                relay_address=self.relay.address,
                isolated=self.isolated,
            ).start()
            with self.world.lock:  # REST v2's ssh.proxy names it from now on
                self.world.gateway_address = self._gateway.address
            for pod in wanted if self.direct_ssh else []:
                self._start_sshd(pod)
        except BaseException as e:  # reported to whoever waits for SSH
            self._ssh_error = e
        finally:
            self._ssh_ready.set()

    def _ssh_thread(self, wanted: list[SimPod]) -> None:
        self._start_ssh(wanted)
        self._direct_for_new_pods()

    def _start_sshd(self, pod: SimPod) -> None:
        assert self._gateway is not None
        try:
            sshd = PodSshd(self._gateway.machine(pod), self.world.container_keys(pod)).start()
        except (RuntimeError, OSError) as e:
            log.warning("direct SSH for %s unavailable: %s", pod.name, e)
            return
        self.sshds[pod.id] = sshd
        with self.world.lock:
            pod.public_ip, pod.direct_ssh_port = "127.0.0.1", sshd.port
        sshd.machine.refresh()  # its sessions' RUNPOD_TCP_PORT_22

    def _pod_started(self, pod: SimPod) -> None:
        """Its container started again: the keys it accepts and its environment are the account's now."""
        self._cancel_end(pod.id)
        self.services.start_pod(pod)  # what served its ports before ends, as its container restarts
        if self._gateway is not None:
            self._gateway.restarted(pod)
        sshd = self.sshds.get(pod.id)
        if sshd is not None:
            sshd.write_keys(self.world.container_keys(pod))

    def _pod_stopped(self, pod: SimPod) -> None:
        """Stopped or terminated: its container ends after the grace, and its services with it (called with the
        world's lock held, so the ending happens on a timer's thread)."""
        timer = threading.Timer(self.stop_grace_s, self._end_container, args=(pod,))
        timer.daemon = True
        with self._ending_lock:
            old = self._ending.pop(pod.id, None)
            self._ending[pod.id] = timer
        if old is not None:
            old.cancel()
        timer.start()

    def _end_container(self, pod: SimPod) -> None:
        with self._ending_lock:
            if self._ending.get(pod.id) is not threading.current_thread():
                return  # started again meanwhile
            del self._ending[pod.id]
        with self.world.lock:
            if pod.status in RUNNING:
                return  # resumed just now: its new container stays
        self.services.stop_pod(pod.id)
        if self._gateway is not None:
            self._gateway.stopped(pod)

    def _cancel_end(self, pod_id: str) -> None:
        with self._ending_lock:
            timer = self._ending.pop(pod_id, None)
        if timer is not None:
            timer.cancel()

    def _pod_created(self, pod: SimPod) -> None:
        """A new pod that asked for 22/tcp on a public IP gets its sshd now; runtime.ports shows it once the
        pod is RUNNING, as RunPod's does."""
        if self.direct_ssh and pod.public_ip and "22/tcp" in pod.ports.split(","):
            if self._new_direct_thread is None:
                self._new_direct_thread = threading.Thread(
                    target=self._direct_for_new_pods, name="sim-sshd-new", daemon=True
                )
                self._new_direct_thread.start()
            self._new_direct.put(pod)

    def _direct_for_new_pods(self) -> None:
        while (pod := self._new_direct.get()) is not None:
            try:
                self.wait_ssh_ready()
            except RuntimeError as e:
                log.warning("direct SSH for %s unavailable: %s", pod.name, e)
                continue
            if self.direct_ssh:  # not once the simulator is stopping
                self._start_sshd(pod)

    def wait_ssh_ready(self, timeout_s: float = 30.0) -> None:
        if not self._ssh_ready.wait(timeout_s):
            raise RuntimeError("the simulated SSH side did not start")
        if self._ssh_error is not None:
            raise RuntimeError(f"the simulated SSH side failed to start: {self._ssh_error}")

    def stop(self) -> None:
        self._ssh_ready.wait(30)
        self.direct_ssh = False  # no sshd for a pod created from now on
        self._new_direct.put(None)
        if self._new_direct_thread is not None:
            self._new_direct_thread.join(10)
        for sshd in list(self.sshds.values()):  # a new pod's sshd may be starting in its thread
            sshd.stop()
        with self._ending_lock:
            timers, self._ending = list(self._ending.values()), {}
        for timer in timers:
            timer.cancel()  # the gateway ends every container now
        self.services.stop()  # first: a relay under way through the proxy ends with its service's connection
        self.proxy.stop()
        with self.world.lock:
            self.world.gateway_address = None
        if self._gateway is not None:
            self._gateway.stop()
        self.api.stop()
        self.hub.stop()
        self.relay.stop()
        if self._own_root:
            self._remove_root()
            atexit.unregister(self._remove_root)

    def _remove_root(self) -> None:
        kill_leftovers(self.root / "pods")
        end_containers(self.root)  # at exit without stop(): its pods' containers too
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> Simulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
