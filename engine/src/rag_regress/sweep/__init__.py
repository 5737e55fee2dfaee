"""`sweep`: try a grid of settings against the current configuration and name a winner only
when the evidence says so (docs/sweep.md).

  grid.py       the [sweep] grid as candidates; their labels and the eval.toml lines to adopt one
  building.py   retrievers built as rarely as possible, per-question values cached
  halving.py    successive halving: which questions each rung evaluates
  choice.py     the tests: each candidate against the current configuration (sign flips, Holm),
                the best against the runner-up (randomised Tukey HSD), the holdout confirmation
  output.py     the console table, build/sweep.md and build/sweep.html
  command.py    the orchestration the command line calls

It sits above run.py in the flow: it runs many evaluations, each of retrieval only.
"""
