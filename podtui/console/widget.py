"""TerminalView: a console on Textual's Line API.

Rows come from the emulator as styled runs; each distinct row becomes a Strip once and is cached by its content,
so a frame redraws only the rows that changed. Frames are drawn at most about 60 times a second, and less often
when drawing gets expensive, so a flood of output never starves the keyboard.

The emulator is the one place a pod's bytes are interpreted; what it hands back is cell text, and cell text can
still hold a character the real terminal would act on (a bidi control, a line separator, DEL). Each such
character is drawn as a placeholder in the columns the engine gave it, so it does nothing and the row keeps its
layout (docs/architecture.md#text-from-outside).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

from rich.cells import cell_len
from rich.color import Color as RichColor
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget

from podtui.console.cells import CellStyle, Color, Row, row_cells
from podtui.console.emulator import STYLE_CACHE, Frame
from podtui.console.keys import RELEASE_KEY, RELEASE_KEY_LABEL, encode_key
from podtui.console.link import ConsoleLink
from podtui.console.mouse import Kind, encode_mouse
from podtui.console.paste import encode_paste, needs_warning, pasted_lines
from podtui.core.visible import is_clean

MIN_FRAME_S = 1 / 60
FLOOD_FRAME_S = 1 / 15  # nobody reads a flood at 60 frames a second; the parser gets the time instead
FLOOD_BYTES = 256 * 1024  # this much output between two frames counts as a flood
_STRIP_CACHE = 2048
_WHEEL_LINES = 3


def _rich_color(c: Color) -> RichColor | None:
    if c is None:
        return None
    if isinstance(c, int):
        return RichColor.from_ansi(c)
    return RichColor.from_rgb(*c)


PLACEHOLDER = "\ufffd"


def inert(text: str, own_cells: bool) -> str:
    """Cell text with every character a terminal would act on made a placeholder, as wide as the engine made it.

    C0 and C1 controls, DEL and lone surrogates always had a cell of their own. A character of no width (a bidi
    control, a line or paragraph separator) has one on avt (`own_cells`); libghostty joins it to the cell before,
    and that whole cell becomes placeholders (two for a wide one)."""
    out: list[str] = []
    for ch in text:
        if is_clean(ch):
            out.append(ch)
        elif own_cells or ch < "\xa0" or "\ud800" <= ch <= "\udfff":
            out.append(PLACEHOLDER)
        else:
            width = 0
            while out and not width:  # back to the character the cell started with
                width = cell_len(out.pop())
            out.append(PLACEHOLDER * width)
    return "".join(out)


def rich_style(s: CellStyle) -> Style:
    return Style(
        color=_rich_color(s.fg),
        bgcolor=_rich_color(s.bg),
        bold=s.bold or None,
        dim=s.dim or None,
        italic=s.italic or None,
        underline=s.underline or None,
        blink=s.blink or None,
        reverse=s.reverse or None,
        conceal=s.invisible or None,
        strike=s.strike or None,
    )


class TerminalView(Widget, can_focus=True):
    DEFAULT_CSS = """
    TerminalView { width: 1fr; height: 1fr; background: $background; color: $foreground; }
    """
    # Shown in the footer while the view has focus, alone: on_key takes the key first (and every other key for
    # the pod, check_consume_key), so this binding only shows it, or runs when its footer key is clicked.
    BINDINGS = [
        Binding(
            RELEASE_KEY,
            "release",
            "podtui keys",
            key_display=RELEASE_KEY_LABEL,
            tooltip="Give the keys back to podtui: its own keys work again",
        )
    ]

    class Output(Message):
        """New output arrived (posted from the SSH reader thread, at most once per drawn frame)."""

    class TitleChanged(Message):
        """The console's state (connecting, connected, reconnecting n, closed) changed."""

    class Released(Message):
        """The user pressed the release key: podtui's own keys should work again."""

    class PasteNeedsConfirmation(Message):
        def __init__(self, view: TerminalView, text: str) -> None:
            super().__init__()
            self.view, self.text, self.lines = view, text, pasted_lines(text)

    def __init__(self, link: ConsoleLink, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.link = link
        self._frame: Frame | None = None
        self._strips: OrderedDict[Row, Strip] = OrderedDict()
        self._styles: dict[CellStyle, Style] = {}
        self._base: Style | None = None  # rich_style walks every ancestor (~14 us): once a frame, not once a strip
        self._last_draw = 0.0
        self._frame_cost = 0.0
        self._fed_at_draw = 0
        self._timer: Timer | None = None
        self._select_from: tuple[int, int] | None = None
        self._select_to: tuple[int, int] | None = None
        self._mouse_down = False
        self.frames_drawn = 0
        self._warned = False
        self._title = ""
        self._changed: Callable[[], None] | None = None  # the callback this view gave its link

    # --- wiring -------------------------------------------------------------------------------------

    def on_mount(self) -> None:
        self.attach()

    def attach(self) -> None:
        """Draw the link from now on. A link is drawn by one view at a time, the one attached last (the pane's, or
        the consoles' screen's once it is shown again): the screen it sizes is this view's."""

        def changed() -> None:  # runs on the SSH reader thread: post_message is thread-safe
            self.post_message(self.Output())

        self._changed = changed
        self.link.on_change = changed
        if self.size.width > 0 and self.size.height > 0:
            self.link.resize(self.size.width, self.size.height)
        self._strips.clear()
        self._draw()

    def on_unmount(self) -> None:
        if self._changed is not None and self.link.on_change is self._changed:  # not another view's, attached since
            self.link.on_change = None

    def on_resize(self, event: events.Resize) -> None:
        size = event.size
        if size.width > 0 and size.height > 0:
            self.link.resize(size.width, size.height)
            self._strips.clear()
            self._draw()

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return container.height

    # --- frames -------------------------------------------------------------------------------------

    def on_terminal_view_output(self, message: Output) -> None:
        message.stop()
        self._schedule()

    def _schedule(self) -> None:
        if self._timer is not None:
            return
        # at most ~60 frames a second (15 in a flood), and no more than a third of the time reading frames
        flooding = self.link.emulator.bytes_fed - self._fed_at_draw > FLOOD_BYTES
        interval = max(FLOOD_FRAME_S if flooding else MIN_FRAME_S, 3 * self._frame_cost)
        wait = self._last_draw + interval - time.monotonic()
        if wait <= 0:
            self._draw()
        else:
            self._timer = self.set_timer(wait, self._timer_due)

    def _timer_due(self) -> None:
        self._timer = None
        self._draw()

    def _draw(self) -> None:
        start = time.monotonic()
        self._base = None
        self.link.take_change()
        self._fed_at_draw = self.link.emulator.bytes_fed
        old = self._frame
        frame = self.link.emulator.frame()
        self._frame = frame
        width = self.size.width
        dirty = set(frame.changed)
        if old is None or old.offset != frame.offset or len(old.rows) != len(frame.rows):
            self.refresh()
        else:
            new_cursor = frame.cursor.y if frame.cursor else None
            old_cursor = old.cursor.y if old.cursor else None
            if old.cursor != frame.cursor:
                dirty.update(y for y in (new_cursor, old_cursor) if y is not None)
            if frame.offset:
                dirty.add(0)  # the "scrolled back" note
            if len(dirty) > len(frame.rows) // 2:
                self.refresh()
            else:
                for y in dirty:
                    self.refresh(Region(0, y, width, 1))
        self.frames_drawn += 1
        if self.link.title != self._title:
            self._title = self.link.title
            self.post_message(self.TitleChanged())
        self._last_draw = time.monotonic()
        self._frame_cost = self._last_draw - start

    # --- drawing ------------------------------------------------------------------------------------

    def _style(self, s: CellStyle) -> Style:
        style = self._styles.get(s)
        if style is None:
            if len(self._styles) >= STYLE_CACHE:  # bounded, as the engines' caches are
                self._styles.clear()
            style = self._styles[s] = rich_style(s)
        return style

    def _strip(self, row: Row, width: int) -> Strip:
        strip = self._strips.get(row)
        if strip is None:
            style = self._style
            # isprintable() is false for every character inert() replaces, and cheap: a clean row pays only that
            segments = [
                Segment(text if text.isprintable() or is_clean(text) else self._inert(text), style(s))
                for text, s in row
            ]
            strip = Strip(segments).adjust_cell_length(width).apply_style(self._base_style())
            self._strips[row] = strip
            if len(self._strips) > _STRIP_CACHE:
                self._strips.popitem(last=False)
        else:
            self._strips.move_to_end(row)
        return strip

    def _base_style(self) -> Style:
        if self._base is None:
            self._base = self.rich_style
        return self._base

    def notify_style_update(self) -> None:
        # the theme or the CSS changed: strips made with the old colours go too
        super().notify_style_update()
        self._base = None
        self._strips.clear()

    def _inert(self, text: str) -> str:
        return inert(text, self.link.emulator.zero_width_own_cell)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        frame = self._frame
        if frame is None or y >= len(frame.rows):
            return Strip.blank(width, self.rich_style)
        strip = self._strip(frame.rows[y], width)
        span = self._selected_span(y, width)
        if span is not None:
            strip = _highlight(strip, span[0], span[1], Style(reverse=True))
        cur = frame.cursor
        if cur is not None and cur.y == y and cur.visible and self.has_focus and 0 <= cur.x < width:
            strip = _highlight(strip, cur.x, cur.x + 1, Style(reverse=True))
        if y == 0 and frame.offset:
            note = f" ↑ {frame.offset} of {frame.history} lines back · shift+PgDn "
            strip = _overlay(strip, max(width - len(note), 0), note, Style(reverse=True, bold=True))
        return strip

    # --- keys and paste -----------------------------------------------------------------------------

    def check_consume_key(self, key: str, character: str | None) -> bool:
        # Every key goes to the pod but the release key: Textual then neither runs nor shows the bindings of the
        # screen and the App around the view (priority ones too) while it has focus.
        return key != RELEASE_KEY

    def action_release(self) -> None:
        self.post_message(self.Released())

    async def on_key(self, event: events.Key) -> None:
        event.stop()
        event.prevent_default()
        key = event.key
        if key == RELEASE_KEY:
            self.action_release()
            return
        if key in ("shift+pageup", "shift+pagedown"):
            rows = max(self.size.height - 1, 1)
            self.scroll_history(-rows if key == "shift+pageup" else rows)
            return
        data = encode_key(key, event.character, self.link.emulator.modes())
        if data:
            self.scroll_history(0)
            self._send(data)

    def _send(self, data: bytes) -> None:
        if self.link.send(data):
            self._warned = False
        elif not self._warned:  # once, not on every key
            self._warned = True
            self.notify(
                f"{self.link.label}: the console is not connected; {RELEASE_KEY_LABEL} then R reconnects",
                severity="warning",
                markup=False,
            )

    def scroll_history(self, delta: int) -> None:
        if delta == 0:
            if self._frame is not None and self._frame.offset:
                self.link.emulator.scroll_to_bottom()
                self._draw()
            return
        self.link.emulator.scroll(delta)
        self._draw()

    async def on_paste(self, event: events.Paste) -> None:
        event.stop()
        event.prevent_default()
        if needs_warning(event.text, self.link.emulator.modes()):
            self.post_message(self.PasteNeedsConfirmation(self, event.text))
        else:
            self.paste(event.text)

    def paste(self, text: str) -> None:
        self.scroll_history(0)
        self._send(encode_paste(text, self.link.emulator.modes()))

    def on_focus(self) -> None:
        if self.link.emulator.modes().focus_events:
            self.link.send(b"\x1b[I")
        self._refresh_cursor()

    def on_blur(self) -> None:
        if self.link.emulator.modes().focus_events:
            self.link.send(b"\x1b[O")
        self._refresh_cursor()

    def _refresh_cursor(self) -> None:
        if self._frame is not None and self._frame.cursor is not None:
            self.refresh(Region(0, self._frame.cursor.y, self.size.width, 1))

    # --- mouse: reports when the program asked, selection otherwise -----------------------------------

    def _report(self, kind: Kind, event: events.MouseEvent) -> bool:
        modes = self.link.emulator.modes()
        if modes.mouse == 0 or event.shift:  # shift always selects, as in xterm
            return False
        button = {1: 0, 2: 1, 3: 2}.get(event.button, 0)
        data = encode_mouse(kind, event.x, event.y, modes, button, shift=event.shift, meta=event.meta, ctrl=event.ctrl)
        if data:
            self.link.send(data)
        return True

    async def on_mouse_down(self, event: events.MouseDown) -> None:
        event.stop()
        self.focus()
        if self._report("press", event):
            return
        self._mouse_down = True
        self.capture_mouse()
        self._set_selection((event.x, event.y), None)

    async def on_mouse_move(self, event: events.MouseMove) -> None:
        if self._mouse_down:
            self._set_selection(self._select_from, (max(event.x, 0), max(event.y, 0)))
        elif self._report("drag" if event.button else "move", event):
            pass

    async def on_mouse_up(self, event: events.MouseUp) -> None:
        event.stop()
        if not self._mouse_down:
            self._report("release", event)
            return
        self._mouse_down = False
        self.release_mouse()
        text = self.selected_text()
        if text:
            self.app.copy_to_clipboard(text)
            self.notify(f"Copied {len(text)} characters", timeout=2)
        else:
            self._set_selection(None, None)

    async def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        event.stop()
        self._wheel(event, up=True)

    async def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        event.stop()
        self._wheel(event, up=False)

    def _wheel(self, event: events.MouseEvent, up: bool) -> None:
        if self._report("wheel_up" if up else "wheel_down", event):
            return
        modes = self.link.emulator.modes()
        if modes.alt_screen:  # a pager or editor: scroll it, as most terminals do
            self.link.send(
                (b"\x1bOA" if modes.app_cursor else b"\x1b[A") * _WHEEL_LINES
                if up
                else (b"\x1bOB" if modes.app_cursor else b"\x1b[B") * _WHEEL_LINES
            )
        else:
            self.scroll_history(-_WHEEL_LINES if up else _WHEEL_LINES)

    def _set_selection(self, start: tuple[int, int] | None, end: tuple[int, int] | None) -> None:
        self._select_from, self._select_to = start, end
        self.refresh()

    def _ordered_selection(self) -> tuple[tuple[int, int], tuple[int, int]] | None:
        a, b = self._select_from, self._select_to
        if a is None or b is None or a == b:
            return None
        (ax, ay), (bx, by) = a, b
        return ((ax, ay), (bx, by)) if (ay, ax) <= (by, bx) else ((bx, by), (ax, ay))

    def _selected_span(self, y: int, width: int) -> tuple[int, int] | None:
        sel = self._ordered_selection()
        if sel is None:
            return None
        (sx, sy), (ex, ey) = sel
        if not sy <= y <= ey:
            return None
        return (sx if y == sy else 0, ex + 1 if y == ey else width)

    def selected_text(self) -> str:
        sel, frame = self._ordered_selection(), self._frame
        if sel is None or frame is None:
            return ""
        (sx, sy), (ex, ey) = sel
        lines = []
        for y in range(sy, min(ey, len(frame.rows) - 1) + 1):
            cells = row_cells(frame.rows[y])
            start, end = (sx if y == sy else 0), (ex + 1 if y == ey else len(cells))
            lines.append("".join(ch for ch, _ in cells[start:end]).rstrip())
        return "\n".join(lines)


def _highlight(strip: Strip, start: int, end: int, style: Style) -> Strip:
    if end <= start:
        return strip
    parts = list(strip.divide([start, end, strip.cell_length]))
    if len(parts) < 2:
        return strip
    parts[1] = parts[1].apply_style(style)
    return Strip.join(parts)


def _overlay(strip: Strip, x: int, text: str, style: Style) -> Strip:
    before = strip.crop(0, x)
    after = strip.crop(x + len(text), strip.cell_length)
    return Strip.join([before, Strip([Segment(text, style)]), after])
