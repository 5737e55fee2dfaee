"""Retrieval: metric definitions (metrics.py) and names, the batch scorer, tokenizing, checking
and running the retriever (search.py), and the retrievers this project ships with (retrievers/)."""
