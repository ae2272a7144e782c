"""The selftest's fixtures, in one public place: what ``screenmill selftest`` runs and what the adversarial and
security tests import (they assert on exactly the inputs and checks the report counts).

By role, from the modules of :mod:`screenmill.pipelines.selftest`: synthetic images (:mod:`.images`), the ingest corpus
(:mod:`.corpus`), the watch on a run (:mod:`.audit`), model answers (:mod:`.answers`), fakes of the outside world
(:mod:`.fakes`), services and secrets (:mod:`.services`), the retry helper (:mod:`.retries`), kill -9 runs
(:mod:`.kill`) and the report (:mod:`.report`).
"""

from __future__ import annotations

from screenmill.pipelines.selftest.answers import AnswerResult, adversarial_answers, run_answers
from screenmill.pipelines.selftest.audit import DT, ROOT, captured, opens_under, run_quietly
from screenmill.pipelines.selftest.corpus import Case, Corpus, CorpusResult, build_corpus, check_corpus, run_corpus
from screenmill.pipelines.selftest.fakes import FakeHub, closed_port, env, no_backoff
from screenmill.pipelines.selftest.images import encode, flip, image_files, png_header_only, scan_bomb_jpeg, ui
from screenmill.pipelines.selftest.kill import FAILPOINTS, KillResult, crash_inputs, kill_at, run_kill9, table_keys
from screenmill.pipelines.selftest.report import format_report, grouped
from screenmill.pipelines.selftest.retries import RetryResult, run_retry
from screenmill.pipelines.selftest.services import TOKEN_VARS, ServiceResult, planted_tokens, run_services, scan_for

__all__ = [
    "DT",
    "FAILPOINTS",
    "ROOT",
    "TOKEN_VARS",
    "AnswerResult",
    "Case",
    "Corpus",
    "CorpusResult",
    "FakeHub",
    "KillResult",
    "RetryResult",
    "ServiceResult",
    "adversarial_answers",
    "build_corpus",
    "captured",
    "check_corpus",
    "closed_port",
    "crash_inputs",
    "encode",
    "env",
    "flip",
    "format_report",
    "grouped",
    "image_files",
    "kill_at",
    "no_backoff",
    "opens_under",
    "planted_tokens",
    "png_header_only",
    "run_answers",
    "run_corpus",
    "run_kill9",
    "run_quietly",
    "run_retry",
    "run_services",
    "scan_bomb_jpeg",
    "scan_for",
    "table_keys",
    "ui",
]
