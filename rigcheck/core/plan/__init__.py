"""``rigcheck plan``: which rigs and cloud instances pass a workload, ranked by cost and time.

The parts, one job each: :mod:`.prices` reads the dated price data (instances, GPUs, platform parts,
electricity, exchange rates); :mod:`.candidates` lists what could run the job (cloud sizes, rigs built
from a GPU, a count and a platform template, the shipped reference rigs, the user's rigs);
:mod:`.sizing` sizes a built rig's parts by rigcheck's own rules; :mod:`.evaluate` runs the full rule set
on each candidate; :mod:`.rank` costs, ranks and marks the Pareto front; :mod:`.render` writes it.
"""
