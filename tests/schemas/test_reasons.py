"""The reason-code registry (``screenmill.schemas.reasons``) against the code and against ``docs/reason-codes.md``."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from screenmill.schemas.reasons import BY_CODE, REASONS, render_markdown

ROOT = Path(__file__).resolve().parents[2]
TOPS = ("pipelines", "stages", "schemas", "annotators")
REGISTRY = ROOT / "schemas" / "reasons.py"

# The callables that make a dead letter (or the exception / record a stage turns into one), and where their reason
# goes: (position among the call's arguments, keyword name).
REASON_ARGUMENT = {
    "Failure": (1, "reason"),  # stages/base.py: Failure(input_id, reason, error, payload_ref)
    "Failed": (0, "reason"),  # annotators/producer.py: a producer's failure
    "Rejected": (0, "reason"),  # schemas/records.py and its subclasses
    "ImageRejected": (0, "reason"),
    "AnswerRejected": (0, "reason"),
    "RenderError": (0, "reason"),
    "Unwritable": (0, "reason"),
    "DeadLetter": (2, "reason"),  # DeadLetter(input_id, stage, reason, ...)
    "LabelFailure": (2, "reason"),
    "dead_letter_row": (2, "reason"),
    "dead_letter": (2, "reason"),
    "rejected_done": (3, "reason"),
    "_dead": (2, "reason"),  # the export's DeadLetter helper
    "run_page": (6, "timeout_reason"),  # the browser host: the reason its time limit raises
}
REASON_ATTRIBUTES = ("error_reason",)  # StageDoFn.error_reason = "..."


def _strings(node: ast.AST | None) -> set[str]:
    """The string constants an expression can evaluate to (a literal, either arm of ``a if c else b``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.IfExp):
        return _strings(node.body) | _strings(node.orelse)
    return set()


def _assigned(scope: ast.AST, name: str) -> set[str]:
    """The string constants assigned to ``name`` anywhere in ``scope`` (plain and tuple-unpacking assignments)."""
    found: set[str] = set()

    def values(target: ast.AST, value: ast.AST) -> None:
        if isinstance(target, ast.Name) and target.id == name:
            found.update(_strings(value))
        elif isinstance(target, ast.Tuple):
            if isinstance(value, ast.IfExp):
                values(target, value.body)
                values(target, value.orelse)
            elif isinstance(value, ast.Tuple) and len(value.elts) == len(target.elts):
                for t, v in zip(target.elts, value.elts, strict=True):
                    values(t, v)

    for node in ast.walk(scope):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                values(target, node.value)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            values(node.target, node.value)
    return found


def _callee(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def _scan(path: Path) -> dict[str, list[str]]:
    """Every reason code ``path`` passes as a dead-letter reason → the ``file:line`` places that pass it."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found: dict[str, list[str]] = {}

    def scope_of(node: ast.AST) -> list[ast.AST]:
        scopes = []
        while node in parents:
            node = parents[node]
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                scopes.append(node)
        return [*scopes[:1], tree]  # the enclosing function, then the module

    def add(expr: ast.AST | None, at: ast.AST) -> None:
        codes = _strings(expr)
        if isinstance(expr, ast.Name):
            for scope in scope_of(at):
                codes |= _assigned(scope, expr.id)
        for code in codes:
            where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
            found.setdefault(code, []).append(f"{where}:{at.lineno}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _callee(node) in REASON_ARGUMENT:
            position, keyword = REASON_ARGUMENT[_callee(node)]
            given = next((k.value for k in node.keywords if k.arg == keyword), None)
            if given is None and len(node.args) > position and not isinstance(node.args[position], ast.Starred):
                given = node.args[position]
            add(given, node)
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id in REASON_ATTRIBUTES for t in node.targets
        ):
            add(node.value, node)
    return found


@functools.cache
def _code_reasons() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for top in TOPS:
        for path in sorted((ROOT / top).rglob("*.py")):
            for code, places in _scan(path).items():
                found.setdefault(code, []).extend(places)
    return found


def test_the_committed_page_is_the_generators_output():
    page = ROOT / "docs" / "reason-codes.md"
    assert page.read_text(encoding="utf-8") == render_markdown(), (
        "docs/reason-codes.md is stale: python -m screenmill.schemas.reasons > docs/reason-codes.md"
    )


def test_every_reason_the_code_dead_letters_is_in_the_registry():
    found = _code_reasons()
    missing = {code: places for code, places in found.items() if code not in BY_CODE}
    assert not missing, f"reason codes missing from schemas/reasons.py: {missing}"


def test_the_scan_sees_every_way_a_reason_is_given():
    # one code per path through _scan: a literal to Failure, a class attribute, a module constant, a local tuple,
    # either arm of a conditional, the browser host's timeout reason, a DeadLetter built by hand, an exception
    found = _code_reasons()
    for code in (
        "bad_url",
        "tiling_failed",
        "changed_during_run",
        "missing_image",
        "changed_since_run",
        "corrupt_image",
        "render_timeout",
        "explore_timeout",
        "bad_annotation",
        "model_output_schema",
        "frame_mismatch",
    ):
        assert code in found, code


def test_the_scan_finds_a_new_reason(tmp_path):
    source = tmp_path / "stage.py"
    source.write_text(
        "class Stage:\n"
        "    error_reason = 'a_fault'\n"
        "    def handle(self, x):\n"
        "        reason = 'b_fault' if x else 'c_fault'\n"
        "        yield Failure(x, reason, 'text', x)\n"
        "        yield Failure(x, reason='d_fault', error='', payload_ref='')\n"
        "        raise ImageRejected('e_fault', 'text')\n"
    )
    assert set(_scan(source)) == {"a_fault", "b_fault", "c_fault", "d_fault", "e_fault"}


def test_every_registered_reason_is_still_written_somewhere():
    literals = set()
    for top in TOPS:
        for path in sorted((ROOT / top).rglob("*.py")):
            if path != REGISTRY:
                tree = ast.parse(path.read_text(encoding="utf-8"))
                literals |= {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and type(n.value) is str}
    stale = [r.code for r in REASONS if r.code not in literals]
    assert not stale, f"reason codes no code writes any more (drop them from schemas/reasons.py): {stale}"


def test_the_registry_is_well_formed():
    codes = [r.code for r in REASONS]
    assert len(codes) == len(set(codes)) == len(BY_CODE)
    for r in REASONS:
        assert r.code.isidentifier() and r.code == r.code.lower(), r.code
        assert r.stages and r.meaning.strip() and "\n" not in r.meaning and "|" not in r.meaning, r.code
