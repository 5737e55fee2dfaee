"""Inputs: the corpus and golden set (data.py), reports and baselines (reports.py), reading any
data file safely and JSON strictly (reading.py), and atomic writes (files.py)."""
