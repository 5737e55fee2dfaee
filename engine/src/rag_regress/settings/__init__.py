"""Settings: eval.toml described once (schema.py), read and validated once (config.py) into
the typed settings every other part takes."""
