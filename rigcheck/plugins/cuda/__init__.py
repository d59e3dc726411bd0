"""CUDA: driver, runtime, architecture and PyTorch wheel compatibility.

The family of a rule is its code's prefix (rigcheck.core.engine.taxonomy); one checker per module."""
