"""The system this project evaluates.

Yours: `retriever.py` and `generator.py` build the system under test; eval.toml's [system]
table names them. The evaluation, the checks and the gate come from the rag-regress library,
pinned in pyproject.toml.
"""
