"""``python -m pipelines.selftest``: the same as ``screenmill selftest``."""

import sys

from pipelines.selftest import main

sys.exit(main())
