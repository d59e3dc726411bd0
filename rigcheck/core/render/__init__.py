"""Report renderers, one module per format. Renderers read a finished Report; they never decide
verdicts. Each is registered through the ``rigcheck_formats`` hook and imported only when used."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RenderOptions:
    """How to render: colour (only on a terminal, never with NO_COLOR) and detail."""

    color: bool = False
    verbose: bool = False
    unicode: bool = True
