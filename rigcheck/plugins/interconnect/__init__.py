"""ICX: interconnect rules: tensor and data parallelism over the links, peer-to-peer, PCIe lanes.

The family of a rule is its code's prefix (rigcheck.core.engine.taxonomy); one checker per module."""
