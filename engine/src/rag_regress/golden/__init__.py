"""The golden set's lifecycle: generate candidates, grade them, merge judgments, pool unjudged
documents. Candidate questions come from the corpus (generate), a person grades them and the
documents other retrievers surface in a self-contained HTML page (page), the downloaded
judgments go back into golden.jsonl (add-judgments), and pooling lists what is still unjudged
(pool); the file formats they share are described in each module."""
