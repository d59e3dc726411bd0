"""The labels convention: keys of ``labels:`` (rig and node group) are kebab-case, ``nodes-per-rack``.

Labels are free-form strings that plugins read (``env: production``, ``nodes-per-rack: "4"``). rigcheck
writes and documents label names in kebab-case, as its config keys and Kubernetes labels are; readers
accept the snake_case spelling too (``nodes_per_rack``), as the project config accepts both.
"""

from __future__ import annotations

from collections.abc import Mapping


def find_label(labels: Mapping[str, str] | None, name: str) -> tuple[str, str] | None:
    """The label ``name`` (kebab-case) in ``labels`` as ``(key as written, value)``, accepting the
    snake_case spelling too (the kebab-case one wins when both are there); ``None`` when absent.

    The key as written gives the label's location: ``ctx.rig_at(f"{node.pointer}/labels/{key}")``.
    """
    if not labels:
        return None
    kebab = name.replace("_", "-")
    for key in (kebab, kebab.replace("-", "_")):
        if key in labels:
            return key, labels[key]
    return None
