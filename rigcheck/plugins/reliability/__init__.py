"""REL: reliability rules: ECC, job interruptions, checkpoint interval, spare nodes.

The family of a rule is its code's prefix (rigcheck.core.engine.taxonomy); one checker per module."""
