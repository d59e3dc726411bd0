"""rigcheck-site-policy: an example rigcheck plugin.

- RACK001: rack power density against the facility's per-rack limit (``site.rack_power_limit_kw``).
- RACK002: a ``nodes-per-rack`` label that is not a whole number of nodes.
- SITE001: no consumer (GeForce) GPUs in rigs labelled ``env: production``.
- A catalog entry for the GeForce RTX 5060 Ti 16GB, which rigcheck's catalog does not have.
- Settings (``plugins-config.site_policy``: ``warn_fraction``, ``rack_units``), plugin API 1.2.

rigcheck finds it through the ``rigcheck`` entry point in pyproject.toml; each hook below is one
of rigcheck's (docs/plugins.md in the rigcheck repository).
"""

from __future__ import annotations

import rigcheck
from rigcheck_site_policy.catalog import RTX_5060_TI_16GB
from rigcheck_site_policy.consumer_gpus import ConsumerGpuPolicy
from rigcheck_site_policy.rack_power import RackPowerDensity
from rigcheck_site_policy.settings import NAMESPACE, SitePolicyConfig

__version__ = "0.1.0"


@rigcheck.hookimpl
def rigcheck_checkers(register):  # type: ignore[no-untyped-def]
    register(RackPowerDensity())
    register(ConsumerGpuPolicy())


@rigcheck.hookimpl
def rigcheck_catalog(register):  # type: ignore[no-untyped-def]
    register(RTX_5060_TI_16GB)


@rigcheck.hookimpl
def rigcheck_config_schema(register):  # type: ignore[no-untyped-def]
    register(SitePolicyConfig, namespace=NAMESPACE)
