"""Benchmarks: compare in one run, report ratios; absolute times only with the hardware named."""
