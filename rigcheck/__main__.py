"""``python -m rigcheck``."""

from rigcheck.cli import entry

entry()
