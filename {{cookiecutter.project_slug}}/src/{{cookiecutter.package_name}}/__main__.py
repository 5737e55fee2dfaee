"""`python -m {{ cookiecutter.package_name }}` runs the same command line as the console script."""

import sys

from .cli import main

sys.exit(main())
