"""Scoring labels against ground truth (``screenmill eval``). Import each name from the module that owns it:

* :mod:`~screenmill.annotators.evaluate.truth`: the truth records: ScreenSpot-style JSONL (``load_truth``), the truth
  a run's DOM or accessibility labels give (``truth_from_labels``), the dev / test split of rendered pages
  (``splits_from_manifest``) and the kinds of truth (``LINE``, ``ICON``, ``CUT``).
* :mod:`~screenmill.annotators.evaluate.text`: how two texts compare (normalised, ``difflib`` ratio).
* :mod:`~screenmill.annotators.evaluate.matching`: predictions from grounding labels, text matching, the greedy
  assignment, point-in-box and the metrics (``evaluate``, ``evaluate_by_split``, ``EvalReport``).
* :mod:`~screenmill.annotators.evaluate.reports`: the printed tables (per image, by role, by script), a split's
  summary and the JSON report of an ``EvalReport``.
* :mod:`~screenmill.annotators.evaluate.ambiguity`: the ambiguity lint (instructions whose labels name disjoint
  boxes; no truth needed).

``truth``, ``text`` and ``ambiguity`` import none of the others; ``matching`` imports those three, ``reports`` imports
``matching``.
"""
