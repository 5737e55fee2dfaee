"""Settings: eval.toml described once (schema.py), read and validated once (config.py) into
the typed settings every other part takes."""

from pathlib import Path

DEFAULT_PATH = Path("eval.toml")  # the settings file a command reads unless --config names another
