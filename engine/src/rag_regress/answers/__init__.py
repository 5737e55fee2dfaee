"""Answers: the checks on every answer (checks.py), the stand-in generator, the faithfulness
judges (judges/), their verdict cache and their calibration against human labels."""
