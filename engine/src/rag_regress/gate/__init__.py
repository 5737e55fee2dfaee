"""The gate: its rules for retrieval (rules.py) and answers, paired statistics, the receipt
that ties a report to its data, the checks that a baseline can be trusted (integrity.py), and
the holdout split."""
