"""rigcheck's built-in plugins: each module registers one checker (or the built-in formats)
through the same hooks a third-party plugin uses."""

BUILTIN_PLUGINS = (
    "rigcheck.plugins.formats",
    "rigcheck.plugins.spec_traps",
    "rigcheck.plugins.system_ram",
    "rigcheck.plugins.cpu_cores",
    "rigcheck.plugins.gpu_clearance",
    "rigcheck.plugins.fp64_rate",
    "rigcheck.plugins.open_air_stacking",
    "rigcheck.plugins.slot_budget",
    "rigcheck.plugins.passive_cooling",
    "rigcheck.plugins.laptop_gpu",
    "rigcheck.plugins.multi_psu_sync",
    "rigcheck.plugins.cuda_device",
    "rigcheck.plugins.psu_sustained",
    "rigcheck.plugins.psu_transients",
    "rigcheck.plugins.gpu_power_connectors",
    "rigcheck.plugins.psu_redundancy",
    "rigcheck.plugins.wall_circuit",
    "rigcheck.plugins.tp_interconnect",
    "rigcheck.plugins.peer_to_peer",
    "rigcheck.plugins.dp_allreduce",
    "rigcheck.plugins.pcie_lanes",
    "rigcheck.plugins.vram_fit",
    "rigcheck.plugins.hbm_bandwidth",
)
