"""A GPU rigcheck's built-in catalog lacks, with its sources (every catalog fact needs one)."""

RTX_5060_TI_16GB = {
    "id": "rtx-5060-ti-16gb",
    "name": "NVIDIA GeForce RTX 5060 Ti 16GB",
    "aliases": ["RTX 5060 Ti 16GB", "GeForce RTX 5060 Ti 16GB", "RTX 5060 Ti"],
    "vendor": "nvidia",
    "software_stack": "CUDA",
    "architecture": "Blackwell",
    "compute_capability": "12.0",
    "memory_gib": 16,
    "memory_type": "GDDR7",
    "memory_bandwidth_gbps": 448,  # 128-bit x 28 Gbps GDDR7
    "tdp_w": 180,  # total graphics power
    "fp32_tflops": 23.7,  # 4,608 CUDA cores x 2 FLOP x 2.572 GHz boost
    "ecc": False,
    "nvlink": "none",
    "pcie": {"gen": 5, "lanes": 8},
    "form_factor": "PCIe",
    "segment": "consumer",
    "min_cuda": "12.8",
    "p2p_stock_driver": False,
    "source": "https://www.techpowerup.com/review/asus-geforce-rtx-5060-ti-tuf-16-gb/ ; "
    "https://chipversus.com/hardware/gpu/geforce-rtx-5060-ti-16gb (4,608 shaders, 2,572 MHz boost, 180 W)",
    "as_of": "2026-11-29",
    "confidence": "medium",
    "notes": "No Founders Edition: partner cards differ in length, slots and power connectors (8-pin or 12V-2x6).",
}
