"""Settings: eval.toml read once into typed settings (config.py); every other part takes them."""
