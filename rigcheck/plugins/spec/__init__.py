"""SPEC: traps in spec files (the rules themselves are the core's, rigcheck.core.spec_rules).

The family of a rule is its code's prefix (rigcheck.core.taxonomy); one checker per module."""
