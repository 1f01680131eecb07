"""`python -m place ...` is `place ...`: the same commands, output and exit codes."""

from __future__ import annotations

import sys

from place.cli import main

if __name__ == "__main__":
    sys.exit(main())
