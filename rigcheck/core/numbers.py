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
