"""rag-regress: evaluate a RAG system on a golden set and gate its regressions.

The engine a project made from rag-eval-template depends on. A project owns its data, its
eval.toml and two factories (a retriever and a generator) that eval.toml's [system] table
names; the engine owns everything else: reading the inputs, retrieval metrics defined as
trec_eval defines them, the answer checks and their judges, the gate, the reports.

Laid out by the flow of a run: inputs/ -> retrieval/ -> answers/ -> gate/ -> render/, driven
by run.py (the pipeline) and commands.py (eval, baseline, gate), with calling/ (how the
team's code and model servers are called), settings/ (eval.toml), text/ (words shared by the
tokenizer and the judge) and interop/ (other tools' files). The plug-in types a team's code
uses are re-exported here from api.py, those of a part a package adds (a judge) from
parts.py; the command line is cli.py (its commands: dispatch.py), the pytest plugin pytest_plugin.py.
"""

from .api import (
    ABSTENTION,
    Answer,
    Context,
    Document,
    Generator,
    History,
    Hit,
    Message,
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
    "History",
    "Hit",
    "Message",
    "Retriever",
    "System",
    "Tokenizer",
    "__version__",
    "looks_like_abstention",
]
__version__ = "2.8.0"  # semantic: a change of any metric's definition is a major version
