"""Other tools' files: TREC and JSON qrels and runs (trec.py), `compare` and the exports."""
