"""Quantities with units: ``"24 GiB"``, ``"1.6 kW"``, ``"400 Gb/s"``, ``"10.5 in"``.

Spec fields carry their unit in their name (``memory_gib``, ``watts``, ``read_mb_s``); such a field
takes a bare number in that unit or a string with any unit of the same dimension, converted
exactly. Bytes and bits differ by case (``GB`` is gigabytes, ``Gb`` gigabits); prefixes are decimal
(``GB`` = 1e9 B) and binary with an ``i`` (``GiB`` = 2**30 B), as IEC 80000-13 defines them.
"""

from __future__ import annotations

import math
import re

# Each dimension maps a unit symbol to its size in the dimension's base unit.
_BYTES = {
    "B": 1.0,
    "kB": 1e3,
    "KB": 1e3,
    "MB": 1e6,
    "GB": 1e9,
    "TB": 1e12,
    "PB": 1e15,
    "KiB": 2.0**10,
    "MiB": 2.0**20,
    "GiB": 2.0**30,
    "TiB": 2.0**40,
    "PiB": 2.0**50,
}
_BYTES_PER_S = {f"{symbol}/s": size for symbol, size in _BYTES.items()}
_BYTES_PER_S.update({"MBps": 1e6, "GBps": 1e9})
_BITS_PER_S = {
    "b/s": 1.0,
    "bps": 1.0,
    "kb/s": 1e3,
    "Kb/s": 1e3,
    "kbps": 1e3,
    "Mb/s": 1e6,
    "Mbps": 1e6,
    "Gb/s": 1e9,
    "Gbps": 1e9,
    "Gbit/s": 1e9,
    "Tb/s": 1e12,
    "Tbps": 1e12,
}
_WATTS = {"W": 1.0, "kW": 1e3, "KW": 1e3, "MW": 1e6}
_MILLIMETRES = {"mm": 1.0, "cm": 10.0, "m": 1000.0, "in": 25.4, "inch": 25.4, '"': 25.4}
_SECONDS = {
    "s": 1.0,
    "sec": 1.0,
    "min": 60.0,
    "h": 3600.0,
    "hr": 3600.0,
    "d": 86400.0,
    "day": 86400.0,
    "days": 86400.0,
    "hours": 3600.0,
    "minutes": 60.0,
}
_VOLTS = {"V": 1.0, "kV": 1e3}
_AMPS = {"A": 1.0}

#: dimension name -> (units, what the dimension is called in messages)
DIMENSIONS: dict[str, dict[str, float]] = {
    "bytes": _BYTES,
    "bytes_per_s": _BYTES_PER_S,
    "bits_per_s": _BITS_PER_S,
    "watts": _WATTS,
    "length": _MILLIMETRES,
    "duration": _SECONDS,
    "volts": _VOLTS,
    "amps": _AMPS,
}

_QUANTITY = re.compile(
    r"""^\s*(?P<number>[-+]?(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*(?P<unit>[A-Za-z"/]+)?\s*$"""
)
#: The JSON Schema pattern for a quantity string (number, optional spaces, a unit).
#: Written so that ECMAScript's unicode-mode regex (check-jsonschema's default engine, editors' YAML
#: language servers) reads it as Python does: no escape that ECMAScript refuses (a quote needs none).
QUANTITY_PATTERN = r'^\s*[-+]?(\d[\d_]*(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*[A-Za-z"/]*\s*$'


#: Digits of the longest number a spec may hold. No quantity needs more, and Python refuses ``int()`` of
#: a string past 4,300 digits (the CVE-2020-10735 limit), so longer numbers are refused before any conversion.
MAX_DIGITS = 30


class UnitError(ValueError):
    """A value that is not a number in the field's unit nor a quantity with a known unit."""


class TooLarge(UnitError):
    """A number past any bound a field has (longer than :data:`MAX_DIGITS`, or past a float's range).

    ``shown`` describes it without writing it out (``"a 310-digit number"``); ``negative`` tells which bound.
    """

    def __init__(self, shown: str, *, negative: bool, unit: str) -> None:
        self.shown, self.negative = shown, negative
        super().__init__(f"expected a number of {unit}, got {shown}")


def digits(value: int) -> int:
    """Decimal digits of ``abs(value)``, counted without ``str()`` (which raises past 4,300 digits).

    >>> digits(0), digits(99), digits(100), digits(-(10**5000))
    (1, 2, 3, 5001)
    """
    magnitude = abs(value)
    if magnitude < 10:
        return 1
    guess = int(magnitude.bit_length() * 0.30102999566398120)  # log10(2): the count or one less
    return guess + 1 if magnitude >= 10**guess else guess


def many_digits(value: int) -> str:
    """``"a 310-digit number"``, ``"a negative 310-digit number"``."""
    return f"a {'negative ' if value < 0 else ''}{digits(value):,}-digit number"


def convert(value: object, dimension: str, unit: str) -> float:
    """Return ``value`` in ``unit``: a bare number is taken as ``unit`` already.

    >>> convert("24 GiB", "bytes", "GiB")
    24.0
    >>> convert("1.6 kW", "watts", "W")
    1600.0
    >>> round(convert("80 GB", "bytes", "GiB"), 2)
    74.51
    """
    units = DIMENSIONS[dimension]
    if isinstance(value, bool):
        raise UnitError(f"expected a number of {unit}, got the boolean {str(value).lower()}")
    if isinstance(value, int) and digits(value) > MAX_DIGITS:
        raise TooLarge(many_digits(value), negative=value < 0, unit=unit)
    if isinstance(value, int | float):
        number = float(value)
        if not math.isfinite(number):
            raise UnitError(f"expected a finite number of {unit}, got {value}")
        return number
    if not isinstance(value, str):
        raise UnitError(f"expected a number of {unit} or a quantity such as '{_example(unit)}'")
    match = _QUANTITY.match(value)
    if match is None:
        raise UnitError(
            f"expected a number of {unit} or a quantity such as '{_example(unit)}', got {value!r}"
        )
    text = match.group("number").replace("_", "")
    mantissa = re.sub(r"[eE].*", "", text).lstrip("+-0").replace(".", "")
    if len(mantissa) > MAX_DIGITS:
        sign = "negative " if text.startswith("-") else ""
        raise TooLarge(f"a {sign}{len(mantissa):,}-digit number", negative=bool(sign), unit=unit)
    number = float(text)
    symbol = match.group("unit")
    if symbol is None:
        return _finite(number, value, unit)
    if symbol not in units:
        known = ", ".join(sorted(units, key=units.__getitem__))
        hint = ""
        if dimension == "bytes_per_s" and symbol in _BITS_PER_S:
            hint = f" ({symbol} is bits per second; bytes per second are written MB/s or GB/s)"
        elif dimension == "bits_per_s" and symbol in _BYTES_PER_S:
            hint = f" ({symbol} is bytes per second; bits per second are written Gb/s or Gbps)"
        raise UnitError(f"unknown unit {symbol!r} in {value!r}{hint}; use one of: {known}")
    return _finite(number * units[symbol] / units[unit], value, unit)


def _finite(number: float, written: str, unit: str) -> float:
    """``number``, or :class:`TooLarge` when the text (``"1e400 W"``) overflowed a float."""
    if not math.isfinite(number):
        shown = repr(written if len(written) <= 40 else written[:37] + "...")
        raise TooLarge(f"{shown}, too large for a number", negative=number < 0, unit=unit)
    return number


def _example(unit: str) -> str:
    examples = {
        "GiB": "64 GiB",
        "GB": "2 TB",
        "W": "1.6 kW",
        "mm": "267 mm",
        "Gb/s": "400 Gb/s",
        "MB/s": "7000 MB/s",
        "h": "12 h",
        "min": "30 min",
        "V": "230 V",
        "A": "16 A",
    }
    return examples.get(unit, f"1 {unit}")
