"""``python -m rigcheck``."""

from rigcheck.cli import console

console()
