"""The live side of rigcheck: read the machine it runs on (``rigcheck probe``).

Everything here is optional and imported on demand. ``pynvml`` (the nvidia-ml-py package) and
``torch`` are imported only inside functions, never at module level, so importing this package costs
nothing and works on a machine without them. The linter (``rigcheck check``, ``lint``, ``estimate``)
never imports ``rigcheck.live``: it reads specs and evidence files, not the machine.

Modules:

* :mod:`rigcheck.live.nvml`: ``NvmlSession``, a thin NVML wrapper that records unsupported calls.
* :mod:`rigcheck.live.host`: CPU, RAM, disks, network links, OS and environment from Linux files.
* :mod:`rigcheck.live.torch_info`: torch's version, bundled CUDA and compiled architectures.
* :mod:`rigcheck.live.probe`: ``probe()`` that puts them together into a rig spec, ``write_probe``
  and ``probe_to_evidence``.
* :mod:`rigcheck.live.measure`: torch micro-benchmarks written as evidence (``rigcheck measure``).

The commands that call them are :mod:`rigcheck.commands.probe` and :mod:`rigcheck.commands.measure`.
"""
