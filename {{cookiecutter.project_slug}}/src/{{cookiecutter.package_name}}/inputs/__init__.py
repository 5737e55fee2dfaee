"""Inputs: the corpus and golden set (data.py), reports and baselines (reports.py), and
atomic writes (files.py)."""
