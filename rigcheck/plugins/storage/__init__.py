"""STO: storage rules: data loading, capacity, checkpoint writes.

The family of a rule is its code's prefix (rigcheck.core.engine.taxonomy); one checker per module."""
