"""`python -m srcad`: see srcad/cli.py."""

import sys

from .cli import main

sys.exit(main())
