"""``python -m pressroom.cli``: the same command as the ``pressroom`` script."""

import sys

from pressroom.cli import main

sys.exit(main())
