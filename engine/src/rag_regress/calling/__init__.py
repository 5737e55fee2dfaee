"""Calling out: how the engine calls code it does not own, and what it keeps of the answers.

The team's retriever and generator, the LLM judge's server and `golden generate`'s model are all
called the same way: through calls.py (the call's result or exception, `[run] timeout`, an exit
or a hang of the callee turned into an error), caller.py (`[run] concurrency` calls in flight on
an executor.py map, retries.py's declared errors retried, ratelimit.py's rate), remote.py (the
same calls on a cluster's workers), asking.py (a question asked with its conversation, when the
callee takes one) and outputs.py (the output cache, keyed by the code that answered). It sits
below everything that calls out: retrieval/, answers/, golden/, sweep/, adapters/, settings/,
run.py, commands.py and dispatch.py may import it; it imports only api.py, cost.py,
execution/ and inputs/, never a package that calls out, so there is no import circle
through it.
"""
