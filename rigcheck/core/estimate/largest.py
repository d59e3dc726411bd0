"""The largest value of an integer setting that still fits, predicted and then verified (issue 20): the
search behind :func:`rigcheck.core.estimate.estimate.largest_micro_batch` and MEM001's fixes."""

from __future__ import annotations

from collections.abc import Callable


def largest_fitting(
    fits: Callable[[int], bool], need: Callable[[int], float], low: int, high: int, capacity: float | None
) -> int | None:
    """The largest ``k`` from ``low`` to ``high`` with ``fits(k)``, None when ``low`` does not fit;
    ``need(k)`` is the memory of a ``k`` that fits, which no value may need from ``capacity`` up.

    Fitting is taken to be monotone (a smaller value never needs more). ``low`` and ``low + 1`` give the
    value where the need would reach ``capacity`` if it grew in a straight line; from there the step
    doubles towards the boundary (up while it fits, down while it does not) and the last gap is halved.
    Where the need is affine that is about four calls instead of twice the bits of the answer; where
    it is not, or there is no ``capacity``, the walk still ends on the boundary. Each ``k`` is asked
    once."""
    known: dict[int, bool] = {}

    def ok(k: int) -> bool:
        if k not in known:
            known[k] = fits(k)
        return known[k]

    if low > high or not ok(low):
        return None
    nearest = low + 1
    if high < nearest or not ok(nearest):
        return low
    slope = need(nearest) - need(low)
    predicted = capacity is not None and slope > 0
    guess = nearest
    if predicted:
        assert capacity is not None
        guess = min(high, max(nearest, low + int((capacity - need(low)) // slope)))
    if ok(guess):
        fitting, step = guess, 1 if predicted else 2
        while fitting < high and ok(min(fitting + step, high)):
            fitting, step = min(fitting + step, high), step * 2
        if fitting >= high:
            return high
        failing = min(fitting + step, high)
    else:
        failing, step = guess, 1
        while not ok(max(failing - step, nearest)):
            failing, step = max(failing - step, nearest), step * 2
        fitting = max(failing - step, nearest)
    while failing - fitting > 1:
        middle = (fitting + failing) // 2
        if ok(middle):
            fitting = middle
        else:
            failing = middle
    return fitting
