#!/usr/bin/env bash
# `rigcheck lint --jobs` where cores are free (issue 20), in one prepared run: for the `device` tool's
# machines (16 CPUs) or any machine with more CPUs than this project's 2-CPU one. No GPU is used.
#
#   bash benchmarks/device/lint_jobs.sh        # results under $OUT (default /tmp/rigcheck-lint-jobs)
#
# Expects python3 with rigcheck's core dependencies, or wheels of them for that Python in .whl/ (the
# device machines have no network; their Python was 3.12 on 2026-11-29). To make .whl/ (git ignores it;
# carry it):
#
#   python -m pip download --only-binary=:all: --python-version 3.12 \
#       --platform manylinux2014_x86_64 -d .whl pydantic pyyaml pluggy jsonschema
#
# rigcheck itself is this checkout (PYTHONPATH), so the code timed is the code committed. Steps:
#   1. the lint group of benchmarks/run.py (--only lint) on every CPU: the 2,000-file lint against the
#      C-loader floor, without MEM001, with no checker, and --jobs 1, 2, 4, 8 and 16;
#   2. the same pinned to two CPUs (taskset -c 0,1): --jobs 2 against --jobs 1 with two cores free.
# Each step is time-limited and logged; a failing step does not stop the other. RUNS (default 3): the
# runs per measurement (median).
set -u
OUT=${OUT:-/tmp/rigcheck-lint-jobs}
RUNS=${RUNS:-3}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 NO_COLOR=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
# the dependencies only: rigcheck's own wheels (proof.sh's) would bring the site-policy plugin's checkers
deps=(); for wheel in .whl/*.whl; do case ${wheel##*/} in rigcheck*) ;; *) [ -e "$wheel" ] && deps+=("$wheel") ;; esac; done
if [ ${#deps[@]} -gt 0 ]; then
  python3 -m pip install -q --no-index --no-deps --no-cache-dir --upgrade --target /tmp/rigcheck-site "${deps[@]}" || exit 1
  export PYTHONPATH="$PYTHONPATH:/tmp/rigcheck-site"
fi

{
  echo "=== machine ($(date -u +%H:%M:%S))"
  uname -sr; nproc; python3 --version
  python3 -m rigcheck --version

  echo; echo "=== lint on every CPU ($(date -u +%H:%M:%S))"
  timeout 360 python3 benchmarks/run.py --only lint --runs "$RUNS" --json "$OUT/lint-all-cpus.json"
  echo "--- exit $?"

  echo; echo "=== lint on two CPUs: taskset -c 0,1 ($(date -u +%H:%M:%S))"
  timeout 240 taskset -c 0,1 python3 benchmarks/run.py --only lint --runs "$RUNS" --json "$OUT/lint-two-cpus.json"
  echo "--- exit $?"
} 2>&1 | tee "$OUT/log.txt"
