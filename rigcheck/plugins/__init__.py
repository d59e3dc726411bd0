"""rigcheck's built-in plugins: each module registers one checker (or the built-in formats)
through the same hooks a third-party plugin uses."""

BUILTIN_PLUGINS = (
    "rigcheck.plugins.formats",
    "rigcheck.plugins.spec_traps",
    "rigcheck.plugins.system_ram",
    "rigcheck.plugins.cpu_cores",
    "rigcheck.plugins.gpu_clearance",
    "rigcheck.plugins.vram_fit",
    "rigcheck.plugins.hbm_bandwidth",
)
