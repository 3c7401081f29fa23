"""``python -m ovearth_core.report``."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
