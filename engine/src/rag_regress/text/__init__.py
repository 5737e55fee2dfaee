"""Text: the primitives every reader of text in the engine shares (words.py): stop-word lists,
stemmers, the word pattern, number words.

Below retrieval/ and answers/ so that both build on the same pieces, and configured by
nothing: the retriever's tokenizer picks from them by the [tokenizer] settings
(retrieval/tokens.py), the judges by a fixed choice of their own (answers/judges/reading.py).
"""
