"""``python -m ldpsample``: the ``ldpsample`` command line (:mod:`ldpsample.cli`)."""

import sys

from ldpsample.cli import main

if __name__ == "__main__":
    sys.exit(main())
