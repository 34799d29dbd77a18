"""``python -m pressroom.cli``: the same command as the ``pressroom`` script."""

import sys

from pressroom.cli import main

if __name__ == "__main__":  # imported (every module is, by `make runtime-check`): nothing runs
    sys.exit(main())
