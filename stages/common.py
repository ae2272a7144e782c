"""Transitional: the names :mod:`stages.annotate` and :mod:`stages.infer` still import from here.

The stage contract (counters, dead letters, outputs) now lives in :mod:`stages.base`, the verified re-read of a
screenshot in :mod:`schemas.verified` and the crash-test hook in :mod:`stages.store.failpoint`. This module
goes away when those two stages become the one labelling stage on :class:`stages.base.StageDoFn`; import from the
new places in new code.
"""

from stages.base import DEAD_LETTER, METRICS_PREFIX, StageCounters, StageOutputs, dead_letter

__all__ = ["DEAD_LETTER", "METRICS_PREFIX", "StageCounters", "StageOutputs", "dead_letter"]
