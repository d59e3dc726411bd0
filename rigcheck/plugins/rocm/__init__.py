"""ROCm: the AMD software stack: the ROCm release against the GPU's gfx target, the PyTorch +rocm wheel's
compiled targets, and the amdgpu driver against the ROCm user space (specs/hardware/rocm.yaml).

The family of a rule is its code's prefix (rigcheck.core.engine.taxonomy); one checker per module."""
