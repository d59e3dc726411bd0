"""BW: throughput rules: decode and prefill speed from HBM bandwidth, training time against targets.

The family of a rule is its code's prefix (rigcheck.core.engine.taxonomy); one checker per module."""
