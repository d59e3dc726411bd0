"""The plugin's settings (``plugins-config.site_policy`` in a project's ``.rigcheck.yaml``), declared with
rigcheck's ``rigcheck_config_schema`` hook; checkers read them as ``ctx.plugin_config``."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

NAMESPACE = "site_policy"  # the same key whether the plugin is installed, loaded with -p, or in tests


class SitePolicyConfig(BaseModel):
    """Every field has a default: a project that does not configure the plugin gets these."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    warn_fraction: float = Field(
        0.9, gt=0, le=1, description="RACK001 warns above this share of the rack's power limit."
    )
    rack_units: int = Field(42, ge=1, le=100, description="Usable units of one rack (EIA-310-E: 42 U).")
