"""Where alerts go besides the app (docs/alerts.md#sinks): the terminal's own notification (OSC 9 / OSC 777),
notify-send, and a webhook."""
