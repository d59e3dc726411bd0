"""PWR: power rules: PSU load, transients, redundancy, connectors, the wall circuit.

The family of a rule is its code's prefix (rigcheck.core.engine.taxonomy); one checker per module."""
