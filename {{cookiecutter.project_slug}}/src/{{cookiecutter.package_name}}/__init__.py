"""Retrieval and answer evaluation, and a regression gate, for our RAG system.

Start at README.md; settings live in eval.toml. Your files are retriever.py and generator.py
(the system under test); they use the plug-in API re-exported here from api.py. Everything
else is the template's engine, laid out by the flow of a run: inputs/ -> retrieval/ ->
answers/ -> gate/ -> render/, driven by run.py, with settings/ (eval.toml) and text/ (words,
stop words and stemmers shared by the tokenizer and the judge); interop/ reads and writes
other tools' files.
"""

from .api import (
    ABSTENTION,
    Answer,
    Context,
    Document,
    Generator,
    Hit,
    Retriever,
    System,
    Tokenizer,
    looks_like_abstention,
)

__all__ = [
    "ABSTENTION",
    "Answer",
    "Context",
    "Document",
    "Generator",
    "Hit",
    "Retriever",
    "System",
    "Tokenizer",
    "__version__",
    "looks_like_abstention",
]
__version__ = "0.1.0"
