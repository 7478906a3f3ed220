"""``python -m wsvm_span``: the ``wsvm-span`` command, run by the Python that has the package (the
workflow's rules call it so, whatever the caller's PATH)."""

import sys

from .cli import main

sys.exit(main())
