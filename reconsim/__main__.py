"""``python -m reconsim`` runs the command line."""

import sys

from reconsim.cli import main

if __name__ == "__main__":
    sys.exit(main())
