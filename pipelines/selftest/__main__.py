"""``python -m screenmill.pipelines.selftest``: the same as ``screenmill selftest``."""

import sys

from screenmill.pipelines.selftest import main

sys.exit(main())
