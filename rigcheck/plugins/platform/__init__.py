"""PLT: platform rules: system RAM, CPU cores, cooling, chassis, slots, FP64, laptops, CUDA devices.

The family of a rule is its code's prefix (rigcheck.core.engine.taxonomy); one checker per module."""
