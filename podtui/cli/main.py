"""Entry point: `podtui` runs the TUI; subcommands do one thing and exit."""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, Protocol, cast

from podtui import __version__
from podtui.cli import output
from podtui.cli.session import UsageError, demo_simulator, open_session, profile_paths, setup_logging
from podtui.core import actions, crash, secret, start_up
from podtui.core.actions import ActionRefused
from podtui.core.api.errors import ApiError
from podtui.core.config import ConfigError, load_config
from podtui.core.floors import InstallTooOld
from podtui.core.log_file import log_location
from podtui.core.paths import Paths
from podtui.core.ssh.errors import SshError, SshKeyError
from podtui.core.visible import visible

if TYPE_CHECKING:
    from podtui.cli.session import DemoSimulator
    from podtui.core.services import Services
    from podtui.ui.app import PodtuiApp
    from podtui.ui.options import ExitWhen


class BuildApp(Protocol):
    """podtui.ui.build.build_app's shape (a test hands `_run_tui` one of its own)."""

    def __call__(
        self, services: Services, *, read_only: bool, exit_when: ExitWhen | None, screenshot: Path | None
    ) -> PodtuiApp: ...


log = logging.getLogger("podtui")


class ReadyCommand(Protocol):
    """A subcommand module: fills in its parser (description, arguments), and runs with the parsed arguments
    (opening its own session, so a command that needs no RunPod account, such as `hf check`, works without one)."""

    def fill_parser(self, p: argparse.ArgumentParser, common: argparse.ArgumentParser) -> None: ...

    def main(self, args: argparse.Namespace, paths: Paths, demo: bool, read_only: bool) -> int: ...


# Getting a pod ready: each command lives in its own module, imported only when the command is used (to parse its
# arguments or print its help), so `podtui` itself starts without them. Here: the module, whether the command
# takes --demo and --read-only, and its line in `podtui --help`.
READY: dict[str, tuple[str, bool, str]] = {
    "hf": ("podtui.cli.hf_cmd", True, "Hugging Face: check access to a repo, download it on a pod"),
    "doctor": (
        "podtui.cli.doctor_cmd",
        True,
        "check a pod's Python, torch, CUDA, GPU, disk, runpodctl and Hugging Face login, with the fix for each problem",
    ),
    "gpus": ("podtui.cli.gpus_cmd", True, "GPU types, prices and stock; which GPU fits a model"),
    "logs": ("podtui.cli.logs_cmd", True, "a pod's container and system logs; --follow goes on with them live"),
    "forward": (
        "podtui.cli.forward_cmd",
        True,
        "forward a pod's port to 127.0.0.1 on this machine over direct SSH, until ctrl+c",
    ),
    "create": ("podtui.cli.create_cmd", True, "create a pod (shows its cost per hour first)"),
    "recreate": (
        "podtui.cli.recreate_cmd",
        True,
        "create a pod again as podtui last saw it (a terminated one too), its cost shown first",
    ),
    "edit": (
        "podtui.cli.edit_cmd",
        True,
        "change a pod's name, image, env, ports or container disk; shows what changes and what a restart resets",
    ),
    "volumes": ("podtui.cli.volumes_cmd", True, "network volumes: size, data centre, cost per month, pods using each"),
    "volume": ("podtui.cli.volume_cmd", True, "create, grow, rename or delete a network volume"),
    "templates": ("podtui.cli.templates_cmd", True, "your templates, or RunPod's public ones (--public)"),
    "template": ("podtui.cli.template_cmd", True, "create a template from a pod's configuration, or delete one"),
    "ssh-config": (
        "podtui.cli.ssh_config_cmd",
        True,
        "an SSH Host block per pod (runpod-<name>) for ssh, scp, VS Code and Cursor; --write keeps it",
    ),
    "spend": (
        "podtui.cli.spend_cmd",
        True,
        "what was spent: today, 7 or 30 days, by pod, GPU, day or volume (RunPod's billing and podtui's ledger)",
    ),
    "watch": (
        "podtui.cli.watch_cmd",
        True,
        "watch the account headless: idle pods, exits, runway, budget, transfers; one line per alert, until ctrl+c",
    ),
    "run": (
        "podtui.cli.run_cmd",
        True,
        "start a command on a pod detached (it survives podtui and the connection), its log kept on the pod",
    ),
    "jobs": ("podtui.cli.jobs_cmd", True, "a pod's detached jobs: state, exit code, duration and what each cost"),
    "job": ("podtui.cli.job_cmd", True, "one job on a pod: its log (--follow goes on with it live), or cancel it"),
    "sync": (
        "podtui.cli.sync_cmd",
        True,
        "copy what changed between a local folder and a pod's, verified per file; --watch keeps them in step",
    ),
    "profiles": (
        "podtui.cli.profiles_cmd",
        True,
        "the accounts in config.toml's [profiles]: each one's key source, burn and balance, and their sum",
    ),
    "sim": (
        "podtui.cli.sim_cmd",
        False,
        "run the simulated RunPod (the demo account) for other processes, until ctrl+c",
    ),
}


def ready_command(name: str) -> ReadyCommand:
    return cast(ReadyCommand, importlib.import_module(READY[name][0]))


class _FilledOnUse(argparse.ArgumentParser):
    """A subcommand's parser that its module fills in the first time it parses or prints help."""

    fill: functools.partial[None] | None = None

    def _filled(self) -> None:
        if self.fill is not None:
            fill, self.fill = self.fill, None
            fill(self)

    def parse_known_args(self, *args: Any, **kwargs: Any) -> Any:
        self._filled()
        return super().parse_known_args(*args, **kwargs)

    def format_help(self) -> str:
        self._filled()
        return super().format_help()

    def format_usage(self) -> str:
        self._filled()
        return super().format_usage()


def _fill_ready(name: str, common: argparse.ArgumentParser, p: argparse.ArgumentParser) -> None:
    ready_command(name).fill_parser(p, common)


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size must look like 120x36, not {text!r}") from None
    if not (40 <= w <= 500 and 10 <= h <= 200):
        raise argparse.ArgumentTypeError("size must be from 40x10 to 500x200")
    return w, h


class _NotQuick(Exception):
    """The quick parse could not settle the arguments: the whole parser parses them (and says what is wrong)."""


class _QuickParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _NotQuick(message)


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The arguments, parsed. `podtui` with options only (the app, e.g. `podtui --demo`) skips building the
    subcommands' parsers: each costs a start about a third of a millisecond, mostly argparse looking up translations of
    its own messages (docs/architecture.md#start-up). Anything else, a mistake or -h too, goes to the whole parser."""
    if _options_only(argv):
        quick = _top_level(_QuickParser(prog="podtui", add_help=False, parents=[_common()]), quick=True)
        try:
            args, rest = quick.parse_known_args(argv)
        except _NotQuick:
            pass
        else:
            if not rest and not args.version:  # --version: the whole parser prints it, or what is wrong first
                del args.version
                args.command = None
                return args
    return build_parser().parse_args(argv)


_TAKES_VALUE = (
    "--screenshot",
    "--size",
    "--exit-when",
    "--profile",
)  # the app's options that take the next word as their value


def _options_only(argv: list[str]) -> bool:
    """Whether every word is one of the app's options or its value: no command, nothing a command would read."""
    words = iter(argv)
    for word in words:
        if not word.startswith("-") or word == "--":
            return False
        if word in _TAKES_VALUE:
            next(words, None)
    return True


def _profile_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--profile",
        metavar="NAME",
        default=argparse.SUPPRESS,
        help="the account: a profile of config.toml's [profiles] (default: PODTUI_PROFILE, else default_profile)",
    )


def _common() -> _FilledOnUse:
    """--demo, --read-only and --profile, which the app and most subcommands take."""
    common = _FilledOnUse(add_help=False)  # the subcommands' parsers' class, as argparse's types want of parents
    common.add_argument(
        "--demo",
        action="store_true",
        default=argparse.SUPPRESS,
        help="use the built-in simulated RunPod (no account needed)",
    )
    common.add_argument(
        "--read-only",
        action="store_true",
        default=argparse.SUPPRESS,
        help="refuse every action that changes or costs anything (stop, resume, restart, terminate, "
        "create, key setup, uploads, Hugging Face downloads, then-terminate, autostop)",
    )
    _profile_option(common)
    return common


def _top_level(p: argparse.ArgumentParser, quick: bool = False) -> argparse.ArgumentParser:
    """The app's own options (`podtui` without a command). The quick parse only notes --version: printing it and
    exiting there would pre-empt what the whole parser does with the words around it (`-h --version` is help)."""
    if quick:
        p.add_argument("--version", action="store_true")
    else:
        p.add_argument("--version", action="version", version=f"podtui {__version__}")
    p.add_argument(
        "--screenshot",
        type=Path,
        metavar="FILE.svg",
        help="render the main screen headless once data has loaded, save it as SVG, exit",
    )
    p.add_argument("--size", type=_size, default=(120, 32), metavar="WxH", help="screen size for --screenshot")
    p.add_argument("--exit-when", choices=["first-frame", "data"], help=argparse.SUPPRESS)  # for bench/
    return p


def build_parser() -> argparse.ArgumentParser:
    common = _common()
    p = argparse.ArgumentParser(prog="podtui", parents=[common], description="A terminal app for your RunPod GPU pods.")
    _top_level(p)
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_FilledOnUse)

    pods = sub.add_parser("pods", parents=[common], help="list pods")
    pods.add_argument("--json", action="store_true", help="JSON list, one object per pod")
    auto = sub.add_parser(
        "autostop",
        parents=[common],
        help="a watchdog on the pod that stops it when idle",
        description="install: start a watchdog on the pod that samples nvidia-smi and stops "
        "the pod through RunPod's REST API v2 with the pod's own key (runpodctl only as a fallback) once the GPUs "
        "stay idle; works with this machine off.",
    )
    auto.add_argument("pod", help="pod id or name")
    auto.add_argument("action", choices=["install", "status", "remove"])
    auto.add_argument(
        "--idle-min",
        type=float,
        default=None,
        metavar="MIN",
        help="minutes under the threshold before stopping (config idle_window_min, 15)",
    )
    auto.add_argument(
        "--threshold",
        type=float,
        default=None,
        metavar="PCT",
        help="GPU utilisation counted as idle (config idle_threshold_pct, 5)",
    )
    cost = sub.add_parser("cost", parents=[common], help="burn, balance, runway, and what each pod costs")
    cost.add_argument("--json", action="store_true", help="one JSON object")
    for verb, what in (
        ("stop", "stop a pod (GPU billing stops, volume kept)"),
        ("resume", "resume a stopped pod (RunPod's start)"),
        ("restart", "restart a running pod's container (volume kept)"),
        ("terminate", "terminate a pod and delete its data"),
    ):
        a = sub.add_parser(verb, parents=[common], help=what)
        a.add_argument(
            "pod", nargs="+", help="pod ids or names (a unique prefix works, but terminate takes the whole one)"
        )
        a.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
        a.add_argument("--json", action="store_true", help="a JSON list: each pod's result")

    ex = sub.add_parser(
        "exec",
        parents=[common],
        help="run a command on a pod (works through RunPod's gateway)",
        description="Run CMD in a shell on POD and exit with its exit status. Over direct SSH "
        "an exec channel is used; otherwise the gateway's PTY shell, driven with markers.",
    )
    ex.add_argument("pod", help="pod id or name")
    ex.add_argument(
        "--via",
        choices=["auto", "exec", "pty", "gateway"],
        default="auto",
        help="exec: direct SSH exec channel only; pty: the gateway-style PTY path even where exec "
        "works; gateway: through RunPod's gateway",
    )
    ex.add_argument("--timeout", type=float, default=600.0, metavar="S", help="give up after S seconds (exit 124)")
    ex.add_argument("words", nargs="*", metavar="-- CMD", help="the command (after --, like ssh)")

    for direction, what, src, dst in (
        (
            "push",
            "copy a file or folder to a pod, verified by checksum on both ends",
            "local",
            "remote (default: the folder the pod's shell starts in)",
        ),
        (
            "pull",
            "copy a file or folder from a pod, verified by checksum on both ends",
            "remote",
            "local (default: the current folder)",
        ),
    ):
        t = sub.add_parser(
            direction,
            parents=[common],
            help=what,
            description=what.capitalize() + ". Exit "
            "status 0 only when verified; the file appears under its name only then.",
        )
        t.add_argument("pod", help="pod id or name")
        t.add_argument("source", metavar=src.upper(), help=f"{src} file or folder (folders go as one archive)")
        t.add_argument("target", metavar=dst.split()[0].upper(), nargs="?", help=dst)
        t.add_argument(
            "--via",
            choices=["auto", "runpodctl", "sftp", "openssh", "console"],
            default="auto",
            help="auto: OpenSSH's ssh over direct SSH (SFTP through podtui's own client without it), else runpodctl "
            "where both ends have it, else the console",
        )
        t.add_argument("--verify", choices=["sha256", "sha1", "md5"], default="sha256", help="checksum (sha256)")
        t.add_argument("--overwrite", action="store_true", help="replace an existing file at the target")
        t.add_argument("--json", action="store_true", help="one JSON event per line on stdout")
        if direction == "pull":
            t.add_argument(
                "--then-terminate",
                action="store_true",
                help="once verified, terminate the pod (asks first unless --yes)",
            )
            t.add_argument("--yes", "-y", action="store_true", help="with --then-terminate: do not ask")

    keys = sub.add_parser("keys", help="a dedicated SSH key for RunPod, registered on the account")
    keys_sub = keys.add_subparsers(dest="keys_command", metavar="ACTION", required=True)
    for name, what in (
        ("setup", "generate ~/.ssh/id_ed25519_runpod if needed and register it (keeps other keys)"),
        ("show", "is the dedicated key there and registered?"),
    ):
        k = keys_sub.add_parser(name, parents=[common], help=what)
        k.add_argument("--key", type=Path, help="key file to use instead of ~/.ssh/id_ed25519_runpod")

    # `podtui ssh POD` and `podtui ssh forget ...` share one parser: a first word "forget" is the action (a pod
    # named "forget" is reached by its id)
    ssh = sub.add_parser(
        "ssh",
        parents=[common],
        help="a shell on a pod with OpenSSH (or VS Code/Cursor), or forget a pinned host key",
        usage="podtui ssh [--demo] [--via {auto,direct,gateway}] [--print] [--editor [{auto,code,cursor}]] POD\n"
        "       podtui ssh [--demo] forget (POD | --gateway)",
        description="podtui ssh POD: OpenSSH's ssh into the pod with podtui's key and podtui's pinned host key "
        "(direct SSH when the pod has it, RunPod's gateway otherwise; podtui connects once first, pinning the key "
        "on first use). A pod named 'forget' is reached by its id. "
        "podtui ssh forget POD|--gateway: forget a pinned host key, a pod's (after it was recreated) or, with "
        "--gateway, the gateway's (only after RunPod announces a new one).",
    )
    ssh.add_argument("pod", metavar="POD", help="pod id or name; or `forget`, then POD or --gateway")
    ssh.add_argument("forget_pod", nargs="?", metavar="POD", help=argparse.SUPPRESS)
    ssh.add_argument(
        "--via",
        choices=["auto", "direct", "gateway"],
        default="auto",
        help="auto: direct SSH when the pod has it and it answers, else the gateway (an interactive shell only)",
    )
    ssh.add_argument(
        "--print", action="store_true", dest="print_only", help="print the command (shell-quoted) instead of running it"
    )
    ssh.add_argument(
        "--editor",
        nargs="?",
        const="auto",
        choices=["auto", "code", "cursor"],
        help="open the pod's /workspace in VS Code or Cursor instead (needs direct SSH and `podtui ssh-config "
        "--write`); auto: whichever is installed",
    )
    ssh.add_argument("--gateway", action="store_true", help="with forget: the gateway's key instead of a pod's")

    cfg = sub.add_parser("config", parents=[common], help="show where podtui looks for things, or store an API key")
    cfg_sub = cfg.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    _profile_option(cfg_sub.add_parser("show", help="paths, the profiles and the API key in use (masked)"))
    sk = cfg_sub.add_parser("set-key", help="store an API key (asked for, never an argument)")
    sk.add_argument("--stdin", action="store_true", help="read the key from standard input")
    _profile_option(sk)  # the profile's own key file (docs/profiles.md#key-sources)
    cfg_sub.add_parser("keys", help="every key podtui binds, by the id config.toml's [keys] remaps it with")

    for name, (_module, takes_common, what) in READY.items():  # filled in when used
        ready = sub.add_parser(name, parents=[common] if takes_common else [], help=what)
        ready.fill = functools.partial(_fill_ready, name, common)
    return p


def run(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command_words: list[str] | None = None
    if "exec" in argv and "--" in argv[argv.index("exec") :]:
        # everything after `--` is the remote command, untouched by option parsing (as with ssh)
        cut = argv.index("--", argv.index("exec"))
        argv, command_words = argv[:cut], argv[cut + 1 :]
    args = parse_args(argv)
    if args.command is not None:
        start_up.resume_collector()
    demo = bool(getattr(args, "demo", False))
    paths = Paths.default()
    setup_logging(paths)  # every command: an unexpected error names a log that exists
    # --profile, else PODTUI_PROFILE (docs/profiles.md#choosing-a-profile); the demo's accounts are its own, so the
    # variable, set for the user's accounts, does not reach it
    env_profile = None if demo else os.environ.get("PODTUI_PROFILE")
    asked = getattr(args, "profile", None) or env_profile or None

    if args.command == "config":
        from podtui.cli import config_cmd

        if args.config_command == "show":
            return config_cmd.cmd_show(paths, asked=asked)
        if args.config_command == "keys":
            return config_cmd.cmd_keys(paths)
        # the profile in use (--profile, PODTUI_PROFILE, else default_profile): its key file, never config.toml's
        # api_key (docs/profiles.md#key-sources)
        return config_cmd.cmd_set_key(paths, args.stdin, profile=asked, default_profile=True)

    if args.command in READY and not READY[args.command][1]:
        # a command with no account (`podtui sim`, the demo's own): no profile, so neither PODTUI_PROFILE nor a
        # broken [profiles] table stops it
        return ready_command(args.command).main(args, paths, demo, bool(getattr(args, "read_only", False)))

    paths = profile_paths(paths, asked, demo)  # every command's folders and key are the profile's

    if args.command in READY:
        return ready_command(args.command).main(args, paths, demo, bool(getattr(args, "read_only", False)))

    if args.command is None:
        if args.screenshot is not None and not args.screenshot.resolve().parent.is_dir():
            raise UsageError(f"cannot save a screenshot in {args.screenshot.resolve().parent}: no such folder")
        return _run_tui(
            demo, args.screenshot, args.size, args.exit_when, paths, bool(getattr(args, "read_only", False))
        )

    from podtui.cli import pods, ssh_cmd

    with open_session(demo, paths) as session:
        read_only = bool(getattr(args, "read_only", False)) or session.config.read_only
        if args.command in ("push", "pull"):
            if args.command == "push":
                actions.guard(read_only, "uploading to a pod")
            if getattr(args, "then_terminate", False):
                actions.guard(read_only, "terminating after the download")
            from podtui.cli.transfer_cmd import cmd_transfer

            return cmd_transfer(
                session,
                args.command,
                args.pod,
                args.source,
                args.target,
                args.via,
                args.verify,
                args.overwrite,
                args.json,
                getattr(args, "then_terminate", False),
                getattr(args, "yes", False),
            )
        if args.command == "pods":
            return pods.cmd_pods(session, args.json)
        if args.command == "autostop":
            from podtui.cli.autostop_cmd import cmd_autostop

            if args.action != "status":
                actions.guard(read_only, f"autostop {args.action}")
            c = session.config
            return cmd_autostop(
                session,
                args.pod,
                args.action,
                args.idle_min or c.idle_window_min,
                c.idle_threshold_pct if args.threshold is None else args.threshold,
            )
        if args.command == "cost":
            from podtui.cli.cost_cmd import cmd_cost

            return cmd_cost(session, args.json)
        if args.command == "exec":
            words = command_words if command_words is not None else args.words
            return ssh_cmd.cmd_exec(session, args.pod, words, args.via, args.timeout)
        if args.command == "keys":
            if args.keys_command == "setup":
                actions.guard(read_only, "registering a key on the account")
                return ssh_cmd.cmd_keys_setup(session, args.key)
            return ssh_cmd.cmd_keys_show(session, args.key)
        if args.command == "ssh":
            if args.pod == "forget":
                if (args.forget_pod is None) == (not args.gateway):
                    raise UsageError("give either a pod or --gateway")
                return ssh_cmd.cmd_forget(session, args.forget_pod, args.gateway)
            if args.forget_pod is not None or args.gateway:
                raise UsageError(
                    "`podtui ssh POD` takes one pod (--gateway goes with `podtui ssh forget`; to connect through "
                    "the gateway: --via gateway)"
                )
            return ssh_cmd.cmd_ssh(session, args.pod, args.via, args.print_only, args.editor)
        actions.guard(read_only, f"{args.command} (it changes what the pod costs)")
        return pods.cmd_action(session, args.command, args.pod, args.yes, as_json=args.json)


def _run_tui(
    demo: bool,
    screenshot: Path | None,
    size: tuple[int, int],
    exit_when: ExitWhen | None,
    paths: Paths,
    read_only: bool = False,
    build: BuildApp | None = None,
) -> int:
    """The app, started again after it asked for the demo (the welcome screen) or for another profile (the
    palette's switch, docs/profiles.md#switching): each run has the services of one account. The demo's simulator
    lives across runs, so switching between its accounts keeps what was done in them."""
    if build is None:
        from podtui.ui.build import build_app

        build = build_app
    with contextlib.ExitStack() as stack:
        demo_sim: DemoSimulator | None = None
        while True:
            if demo and demo_sim is None:
                demo_sim = stack.enter_context(demo_simulator(load_config(paths.unprofiled())))
            with open_session(demo, paths, allow_no_key=True, demo_sim=demo_sim) as services:
                app = build(services, read_only=read_only, exit_when=exit_when, screenshot=screenshot)
                headless = screenshot is not None or exit_when is not None
                try:
                    with output.raw_streams():  # Textual draws with escape sequences of its own
                        app.run(headless=headless, size=size if headless else None)
                finally:
                    app.close_connections()  # before the (demo) simulator stops, so no console tries to reconnect
            if app.demo_requested:  # "Try the demo" on the welcome screen
                demo, paths = True, profile_paths(paths.unprofiled(), None, True)
                continue
            if app.profile_requested is not None:
                log.info("switching to profile %s", app.profile_requested)
                paths = profile_paths(paths.unprofiled(), app.profile_requested, demo)
                continue
            break
    if screenshot is not None:
        if not screenshot.exists():
            raise UsageError(f"no screenshot was written to {screenshot}")
        print(f"saved {screenshot}")
    return app.return_code or 0


def main(argv: list[str] | None = None) -> int:
    start_up.pause_collector()  # the app resumes it after its first frame; a command, once parsed
    try:
        with output.safe_streams():  # nothing printed below reaches the terminal as a control sequence
            return _main(argv)
    finally:
        start_up.resume_collector()


def _main(argv: list[str] | None) -> int:
    try:
        return run(argv)
    except (ApiError, ConfigError, ActionRefused, SshKeyError, InstallTooOld) as e:
        # before ValueError: InvalidInput is both, and an unsafe id RunPod sent is not the user's usage mistake
        sys.stderr.write(f"podtui: error: {visible(secret.redact(str(e)))}\n")
        return 1
    except (UsageError, ValueError) as e:
        sys.stderr.write(f"{e}\n" if "\n" in str(e) else f"podtui: {e}\n")
        return 2
    except SshError as e:
        sys.stderr.write(f"podtui: ssh: {visible(secret.redact(str(e)))}\n")
        return 255
    except BrokenPipeError:  # `podtui pods | head`: the reader left, which is not an error
        getattr(sys.stderr, "inner", sys.stderr).close()
        return 0
    except KeyboardInterrupt:
        sys.stderr.write("podtui: interrupted\n")
        return 130
    except Exception as e:  # one line for the user, the traceback (without locals, secrets masked) for the log
        log.exception("unexpected error")
        sys.stderr.write(f"podtui: {crash.one_line(e, log_location())}\n")
        return 1
