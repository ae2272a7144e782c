"""The reports of an evaluation (:class:`~screenmill.annotators.evaluate.matching.EvalReport`): the per-image table
``screenmill eval`` prints, a split's summary line, the tables by role and by script, the elements with no visible
text reported apart, and the JSON report. Pure functions of the report; none changes a count.
"""

from __future__ import annotations

from collections import Counter

from screenmill.annotators.evaluate.matching import EvalReport
from screenmill.annotators.evaluate.truth import WINDOW_TITLE


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def unreadable_by_script(report: EvalReport) -> dict[str, dict[str, int]]:
    """Per script the OCR models cannot read: truth ``elements`` holding letters of it and the ``screenshots``
    they are on (:func:`screenmill.annotators.scripts.unreadable_scripts`), scripts sorted by name."""
    out: dict[str, dict[str, int]] = {}
    for s in report.images:
        for script, n in s.unreadable_scripts:
            row = out.setdefault(script, {"elements": 0, "screenshots": 0})
            row["elements"] += n
            row["screenshots"] += 1
    return dict(sorted(out.items()))


def not_text_by_element(report: EvalReport) -> dict[str, int]:
    """Per role, the truth elements with no visible text left out of recall, most first."""
    roles = Counter(t.element or "-" for t in report.not_text)
    return dict(sorted(roles.items(), key=lambda kv: (-kv[1], kv[0])))


def by_element(report: EvalReport) -> dict[str, dict]:
    """Per truth ``element`` (the DOM role for truth from DOM labels): truth, found, recall, point accuracy, and
    the predictions whose point lies in an element of that role with the share of them that are precise
    (predictions in no truth element are the row ``(none)``)."""
    out: dict[str, dict] = {}

    def row(role: str) -> dict:
        return out.setdefault(role, {"truth": 0, "found": 0, "point_in_box": 0, "predictions": 0, "precise": 0})

    for t in (*(m.truth for m in report.matches), *report.missed):
        row(t.element or "-")["truth"] += 1
    for m in report.matches:
        r = row(m.truth.element or "-")
        r["found"] += 1
        r["point_in_box"] += m.point_in_box
    for role, precise in report.hits:
        r = row(role or "(none)")
        r["predictions"] += 1
        r["precise"] += precise
    for r in out.values():
        r["recall"] = r["found"] / r["truth"] if r["truth"] else None
        r["point_accuracy"] = r["point_in_box"] / r["found"] if r["found"] else None
        r["precision"] = r["precise"] / r["predictions"] if r["predictions"] else None
    return dict(sorted(out.items(), key=lambda kv: (-kv[1]["truth"], kv[0])))


def format_window_titles(report: EvalReport) -> str:
    """One line: the window titles among the truth (:data:`screenmill.annotators.evaluate.truth.WINDOW_TITLE`, the
    title bars a window manager drew) and how many a label found: ``window titles: N, found M``."""
    truth = sum(t.element == WINDOW_TITLE for t in (*(m.truth for m in report.matches), *report.missed))
    found = sum(m.truth.element == WINDOW_TITLE for m in report.matches)
    return f"window titles: {truth}, found {found}"


def summary(report: EvalReport) -> str:
    """One line: truth, recall, point accuracy, predictions, precision, ambiguous labels."""
    return (
        f"truth {report.truth}, recall {_pct(report.recall)}, point accuracy {_pct(report.point_accuracy)},"
        f" predictions {report.predictions}, precision {_pct(report.precision)}"
        + (f" (whole elements and lines only: {_pct(report.precision_whole)})" if report.line_parts else "")
    )


def format_unreadable(report: EvalReport) -> str:
    """One line: the truth in scripts the OCR models cannot read, by script (``none`` when there is none)."""
    rows = unreadable_by_script(report)
    body = "; ".join(f"{k} {v['elements']} elements on {v['screenshots']} screenshots" for k, v in rows.items())
    return f"truth in scripts the OCR models cannot read: {body or 'none'}"


def format_not_text(report: EvalReport) -> str:
    """One line: the truth elements with no visible text left out of recall (``evaluate(..., icons=False)``), how
    many a prediction named, and their count by role; "" when there are none."""
    roles = not_text_by_element(report)
    if not roles:
        return ""
    body = ", ".join(f"{k} {n}" for k, n in roles.items())
    cut = report.not_text_cut
    return (
        f"not text (out of OCR's reach, not in recall): {sum(roles.values())} elements"
        + (f" ({cut} text cut by the screenshot's edge)" if cut else "")
        + f", {len(report.not_text_matches)} named by a label; by role {body}"
    )


def format_split_details(report: EvalReport) -> str:
    """The lines printed under a split's (or a part's) :func:`summary`: the truth in scripts OCR cannot read,
    the elements with no visible text left out of recall (when there are), the table by role."""
    return "\n".join(x for x in (format_unreadable(report), format_not_text(report), format_by_element(report)) if x)


def format_by_element(report: EvalReport) -> str:
    """A plain-text table of :func:`by_element`."""
    head = f"{'role':<16} {'truth':>6} {'found':>6} {'recall':>7} {'point acc':>9} {'preds':>6} {'precision':>9}"
    lines = [head]
    for role, r in by_element(report).items():
        lines.append(
            f"{role:<16} {r['truth']:>6} {r['found']:>6} {_pct(r['recall']):>7} {_pct(r['point_accuracy']):>9}"
            f" {r['predictions']:>6} {_pct(r['precision']):>9}"
        )
    return "\n".join(lines)


def format_table(report: EvalReport) -> str:
    """A plain-text table: one row per image and a total row."""
    rows = [("image", "truth", "found", "recall", "in box", "point acc", "preds", "unmatched", "precision",
             "unreadable scripts")]  # fmt: skip
    for s in report.images:
        rows.append(
            (s.image, str(s.truth), str(s.found), _pct(s.recall), str(s.point_in_box), _pct(s.point_accuracy),
             str(s.predictions), str(s.unmatched), _pct(s.precision),
             " ".join(f"{k}:{n}" for k, n in s.unreadable_scripts) or "-")
        )  # fmt: skip
    rows.append(
        ("TOTAL", str(report.truth), str(report.found), _pct(report.recall), str(report.point_in_box),
         _pct(report.point_accuracy), str(report.predictions), str(len(report.unmatched)), _pct(report.precision),
         str(sum(n for s in report.images for _, n in s.unreadable_scripts)))
    )  # fmt: skip
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for k, r in enumerate(rows):
        cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True)]
        lines.append("  ".join(cells))
        if k == 0 or k == len(rows) - 2:
            lines.append("  ".join("-" * w for w in widths))
    lines.append(
        f"ambiguous labels: {report.ambiguous_labels} in {len(report.ambiguous)} (instruction, screenshot) pairs"
        " naming disjoint boxes"
    )
    lines.append(format_unreadable(report))
    if not_text := format_not_text(report):
        lines.append(not_text)
    if report.ignored_predictions:
        lines.append(f"({report.ignored_predictions} predictions on images not in the truth set were ignored)")
    return "\n".join(lines)


def to_dict(report: EvalReport, details: bool = False) -> dict:
    """JSON-ready summary; ``details=True`` adds the missed truth texts and unmatched prediction texts."""
    d = {
        "truth": report.truth,
        "found": report.found,
        "recall": report.recall,
        "point_in_box": report.point_in_box,
        "point_accuracy": report.point_accuracy,
        "predictions": report.predictions,
        "precise": report.precise,
        "precision": report.precision,
        "line_parts": report.line_parts,
        "precision_whole": report.precision_whole,
        "unmatched_predictions": len(report.unmatched),
        "ignored_predictions": report.ignored_predictions,
        "min_ratio": report.min_ratio,
        "ambiguous_labels": report.ambiguous_labels,
        "ambiguous_pairs": len(report.ambiguous),
        "unreadable_scripts": unreadable_by_script(report),
        "not_text": {
            "elements": len(report.not_text_matches) + len(report.not_text_missed),
            "found": len(report.not_text_matches),
            "cut": report.not_text_cut,
            "by_element": not_text_by_element(report),
        },
        "by_element": by_element(report),
        "images": [
            {
                "image": s.image,
                "truth": s.truth,
                "found": s.found,
                "recall": s.recall,
                "point_in_box": s.point_in_box,
                "point_accuracy": s.point_accuracy,
                "predictions": s.predictions,
                "precision": s.precision,
                "unmatched_predictions": s.unmatched,
                "unreadable_scripts": dict(s.unreadable_scripts),
            }
            for s in report.images
        ],
    }
    if details:
        d["missed"] = [{"image": t.image, "text": t.text, "box": list(t.box)} for t in report.missed]
        d["unmatched"] = [{"image": p.image, "text": p.text, "point": list(p.point)} for p in report.unmatched]
        d["point_misses"] = [
            {
                "image": m.truth.image,
                "text": m.truth.text,
                "box": list(m.truth.box),
                "point": list(m.prediction.point),
            }
            for m in report.matches
            if not m.point_in_box
        ]
        d["ambiguous"] = [
            {"screenshot_id": a.screenshot_id, "instruction": a.instruction, "boxes": [list(b) for b in a.boxes]}
            for a in report.ambiguous
        ]
    return d
