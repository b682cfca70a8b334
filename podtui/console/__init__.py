"""The console: a terminal emulator adapter over two engines, the session that feeds it, and its widget."""
