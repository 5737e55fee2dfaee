"""The gate: its rules for retrieval (rules.py) and answers, paired statistics, the receipt
that ties a report to its data, and the holdout split."""
