"""NET: network rules: the fabric, NCCL interfaces and settings, rendezvous ports, GPUDirect RDMA, subnets.

The family of a rule is its code's prefix (rigcheck.core.engine.taxonomy); one checker per module."""
