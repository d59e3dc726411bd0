"""MEM: memory rules: does the workload fit in VRAM (and in host RAM when it offloads).

The family of a rule is its code's prefix (rigcheck.core.engine.taxonomy); one checker per module."""
