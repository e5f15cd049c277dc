"""Monte Carlo campaigns: a spec (:mod:`eels_gz.sweep.spec`) -> samples -> one run per sample on Ray
(:mod:`eels_gz.sweep.execute`, :mod:`eels_gz.sweep.commands`) -> a results table, summary and plots
(:mod:`eels_gz.sweep.results`). ``eels-gz sweep SPEC.yaml --out DIR`` (eels_gz/cli/sweep.py)."""

from eels_gz.sweep.execute import run_sweep
from eels_gz.sweep.spec import Sample, SweepSpec, check_spec, load_spec, parse_spec

__all__ = ["Sample", "SweepSpec", "check_spec", "load_spec", "parse_spec", "run_sweep"]
