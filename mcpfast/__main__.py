"""``python -m mcpfast ...``: the same command line as the ``mcpfast`` console script."""

import sys

from mcpfast.cli import main

if __name__ == "__main__":
    sys.exit(main())
