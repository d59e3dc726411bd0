"""Quantities with units (IEC 80000-13 prefixes; bits and bytes by case)."""

from __future__ import annotations

import pytest

from rigcheck.core.spec.units import UnitError, convert


@pytest.mark.parametrize(
    ("value", "dimension", "unit", "expected"),
    [
        (64, "bytes", "GiB", 64.0),  # a bare number is already in the field's unit
        ("64", "bytes", "GiB", 64.0),
        ("24 GiB", "bytes", "GiB", 24.0),
        ("2 TiB", "bytes", "GiB", 2048.0),
        ("80 GB", "bytes", "GiB", 80e9 / 2**30),  # 74.505... GiB
        ("512MiB", "bytes", "GiB", 0.5),
        ("3.84 TB", "bytes", "GB", 3840.0),
        ("1.6 kW", "watts", "W", 1600.0),
        ("350W", "watts", "W", 350.0),
        ("10.5 in", "length", "mm", 266.7),
        ("26.7 cm", "length", "mm", 267.0),
        ("400 Gb/s", "bits_per_s", "Gb/s", 400.0),
        ("100 Gbps", "bits_per_s", "Gb/s", 100.0),
        ("7 GB/s", "bytes_per_s", "MB/s", 7000.0),
        ("125 MiB/s", "bytes_per_s", "MB/s", 125 * 2**20 / 1e6),  # 131.072 MB/s
        ("90 min", "duration", "h", 1.5),
        ("2 d", "duration", "h", 48.0),
    ],
)
def test_convert(value: object, dimension: str, unit: str, expected: float) -> None:
    assert convert(value, dimension, unit) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("lots", "expected a number of GiB or a quantity such as '64 GiB', got 'lots'"),
        ("64 GB/s", "unknown unit 'GB/s'"),
        (True, "boolean"),
        (float("inf"), "finite"),
        ([64], "quantity such as"),
    ],
)
def test_convert_errors(value: object, words: str) -> None:
    with pytest.raises(UnitError) as excinfo:
        convert(value, "bytes", "GiB")
    assert words in str(excinfo.value)


def test_bits_and_bytes_are_not_confused() -> None:
    with pytest.raises(UnitError) as excinfo:
        convert("400 Gb/s", "bytes_per_s", "MB/s")
    assert "bits per second" in str(excinfo.value)
