"""EVD: measured evidence (--evidence) against the rig spec.

The family of a rule is its code's prefix (rigcheck.core.engine.taxonomy); one checker per module."""
