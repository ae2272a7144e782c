"""The selftest's report: the figures of every section as the lines ``screenmill selftest`` prints."""

from __future__ import annotations

from typing import Any


def _pct(n: int, d: int) -> str:
    return f"{n}/{d} ({100.0 * n / d:.1f} %)" if d else "0/0"


def grouped(crashes: list[str]) -> list[str]:
    """``recipe / answer: Error`` lines folded to one line per answer and error, naming the recipes."""
    by: dict[str, list[str]] = {}
    for line in crashes:
        recipe, _, rest = line.partition(" / ")
        by.setdefault(rest, []).append(recipe)
    return [f"{rest} ({len(r)} recipes: {', '.join(r)})" for rest, r in by.items()]


def format_report(figures: dict[str, Any]) -> str:
    """The lines of the report on :func:`screenmill.pipelines.selftest.selftest`'s figures, ending in PASS or FAIL."""
    lines = [f"screenmill selftest ({figures['mode']})"]
    c = figures.get("corpus")
    if c:
        lines += [
            f"  ingest corpus: {c['inputs']} inputs tried ({c['bad']} bad, {c['good']} good) in {c['seconds']:.1f} s",
            f"    bad inputs dead-lettered with the expected reason: {_pct(c['bad_dead_lettered'], c['bad'])}",
            f"    good inputs accepted: {_pct(c['good_accepted'], c['good'])}",
            f"    run crashed: {'yes: ' + c['crash'] if c['crash'] else 'no'}; counts add up: "
            f"{'yes' if c['counts_add_up'] else 'NO'}",
            f"    files opened outside the input root: {len(c['outside_opened'])}",
        ]
        lines += [f"    ! {m}" for m in c["mismatches"]] + [f"    (not built: {n})" for n in c["not_built"]]
    a = figures.get("answers")
    if a:
        lines.append(
            f"  model answers: {a['tried']} tried: {a['rejected']} rejected with a reason, {a['kept']} kept as plain "
            f"strings, {len(a['crashes'])} crashes, {len(a['unstorable'])} unstorable, executed: "
            f"{'YES' if a['executed'] else 'no'}"
        )
        lines += [f"    ! crash: {m}" for m in grouped(a["crashes"])] + [f"    ! {m}" for m in a["unstorable"]]
    s = figures.get("services")
    if s:
        survived = sum(1 for v in s["faults"].values() if v)
        lines.append(
            f"  secrets: {s['planted']} planted tokens, {s['scanned_files']} files + captured output "
            f"({s['scanned_chars']} chars) scanned: {len(s['hits'])} hits"
        )
        lines.append(f"  service faults survived: {survived}/{len(s['faults'])}")
        lines += [f"    {'ok' if v else 'FAILED'}: {k}" for k, v in s["faults"].items()]
        lines += [f"    ! {h}" for h in s["hits"]] + [f"    (skipped: {k})" for k in s["skipped"]]
        lines += [f"    ! crash: {s['crash']}"] if s["crash"] else []
    r = figures.get("retry")
    if r:
        lines.append(
            f"  retry helper: transient faults survived {r['survived']}/{r['transient']}, permanent errors raised "
            f"at once {r['not_retried']}/{r['permanent']}, lasting outage ends in GaveUp: "
            f"{'yes' if r['outage_gave_up'] else 'NO'}"
        )
        lines += [f"    ! {m}" for m in r["failures"]]
    k = figures.get("kill9")
    if k:
        lines.append(
            f"  kill -9 + rerun at {len(k['points'])} points: rows lost {k['lost']}, duplicated {k['duplicated']}"
        )
        lines += [f"    {p}: {v}" for p, v in k["points"].items()]
    elif figures["mode"] == "quick":
        lines.append("  kill -9 + rerun: skipped (--quick)")
    lines.append(f"  crashes: {figures['crashes']}")
    lines += [f"    ! {m}" for m in figures["crash_list"]]
    lines.append(f"result: {'PASS' if figures['ok'] else 'FAIL'}")
    return "\n".join(lines)
