"""Formatting numbers for messages: short, without trailing zeros, with thousands separators."""

from __future__ import annotations


def fmt(value: float, digits: int = 2) -> str:
    """``fmt(1.3333) == "1.33"``, ``fmt(64.0) == "64"``, ``fmt(12500) == "12,500"``."""
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    text = f"{value:,.{digits}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text if text not in ("-0", "") else "0"


def duration(seconds: float) -> str:
    """``duration(0.031) == "0.031 s"``, ``duration(747.7) == "12.5 min"``, ``duration(9000) == "2.5 h"``."""
    if seconds < 10:
        return f"{seconds:.2g} s"
    if seconds < 120:
        return f"{fmt(seconds, 1)} s"
    if seconds < 7200:
        return f"{fmt(seconds / 60, 1)} min"
    return f"{fmt(seconds / 3600, 1)} h"
