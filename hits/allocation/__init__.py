"""Adaptive allocation of crowd work: `policy` (pure numpy, shared with bench/allocation_bench.py) decides
how many places a HIT gets; `service` takes that decision in the transaction that stores a submission."""
