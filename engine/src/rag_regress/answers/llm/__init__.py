"""The LLM judge ([judge] backend = "llm"): a chat model behind an OpenAI-compatible API.

  judge.py       the backend: grouping sentences into requests, votes, evidence, findings
  settings.py    [judge.llm], its own settings: the server, the prompt, votes and sampling
  client.py      one chat-completions request over HTTP (urllib), its errors sorted for retries
  prompt.py      the prompt: the engine's versioned prompt_v1.txt or a team's own file
  prompt_v1.txt  the engine's prompt (its sha256 is part of the judge identity)

Outside answers/judges/ on purpose: the built-in judges' rules digest (judges/__init__.py)
covers that folder and text/, and this backend is registered as an entry point like any a
package adds (docs/judges.md, "The LLM judge").
"""
