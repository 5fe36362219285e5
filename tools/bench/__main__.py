"""`python -m tools.bench`: see tools/bench/cli.py."""

import sys

from tools.bench.cli import main

sys.exit(main())
