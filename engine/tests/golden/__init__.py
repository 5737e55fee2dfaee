"""A package only so that tests/golden/conftest.py is imported as golden.conftest: a second
plain `conftest` module would take the name from tests/conftest.py, which test modules import."""
