"""The shipped-data cache (issue 20) gives back exactly what the YAML gave, or nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from rigcheck.core.catalog import data_cache


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RIGCHECK_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("RIGCHECK_NO_CACHE", raising=False)
    return tmp_path


def test_plain_data_round_trips(cache: Path) -> None:
    data = {"a": [1, 2.5, "x", None, True], "b": {"c": float("inf")}}
    data_cache.put("d1", data)
    assert data_cache.get("d1") == data


@pytest.mark.parametrize("data", [{1: "integer key"}, {"t": (1, 2)}, {"k": {2.5: "float key"}}])
def test_data_json_would_change_is_not_cached(cache: Path, data: dict) -> None:  # type: ignore[type-arg]
    data_cache.put("d2", data)
    assert data_cache.get("d2") is None


def test_no_cache_switch(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RIGCHECK_NO_CACHE", "1")
    data_cache.put("d3", {"a": 1})
    assert data_cache.get("d3") is None and not list(cache.iterdir())
