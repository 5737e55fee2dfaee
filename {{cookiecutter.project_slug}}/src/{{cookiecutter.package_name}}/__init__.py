"""Retrieval evaluation and a regression gate for our RAG system.

Start at README.md; settings live in eval.toml; the retriever you evaluate is built in
retriever.py.
"""

__version__ = "0.1.0"
