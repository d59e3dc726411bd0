"""SPEC: traps in spec files (the rules themselves are the core's, rigcheck.core.spec.spec_rules).

The family of a rule is its code's prefix (rigcheck.core.engine.taxonomy); one checker per module."""
