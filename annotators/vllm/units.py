"""The vLLM labelling stage's work units (:class:`Work`): one per request to make, by recipe kind (see
:mod:`screenmill.annotators.vllm.expand`): ``propose`` one per distinct screenshot, ``localize`` one per (screenshot,
instruction) of an instructions JSONL (:func:`localize_units`), ``step`` / ``explain`` one per episode step or recorded
action, ``task`` one per episode (:class:`_EpisodeSteps`); and the fan-out that redistributes them before the engine
(:class:`FanOut`). With ``pack`` K > 1, a screenshot's localize units go K at a time into packed units
(:func:`pack_units`: one request each).

Reason codes (stage ``infer``): ``instruction_without_image``, ``duplicate_instruction``, ``episode_without_task``,
``bad_recorded_action``, ``element_outside_image`` (describe recipes); loose screenshots of step recipes are counted
``ignored``.
"""

from __future__ import annotations

import dataclasses
import json
import posixpath
from collections import Counter
from typing import TYPE_CHECKING

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.transforms.util import ReshufflePerKey
from screenmill.annotators import recipes_describe as describing
from screenmill.annotators.dom.explore import recorded_instruction
from screenmill.annotators.recipes import task_frames
from screenmill.annotators.recorded import RecordedAction, ui_actions
from screenmill.schemas.records import Screenshot, first_occurrence
from screenmill.stages.base import DEAD_LETTER, METRICS_PREFIX, Failure, StageDoFn, StageOutputs

if TYPE_CHECKING:
    from screenmill.stages.label.vlm import VlmConfig

STAGE = "infer"
MAX_HISTORY_CHARS = 1200


@dataclasses.dataclass(frozen=True, slots=True)
class Work:
    """One request to make: the current screenshot, earlier ones (oldest first) and the prompt fields; a packed unit
    holds the localize units it asks in one request instead (``pack``, in order; their screenshot is ``shot``)."""

    key: str
    shot: Screenshot
    history: tuple[Screenshot, ...] = ()
    fields: tuple[tuple[str, str], ...] = ()
    recorded: RecordedAction | None = None
    pack: tuple[Work, ...] = ()


def _history_text(previous: list[Screenshot]) -> str:
    parts = [f"step {s.step_index}: {s.recorded_action}" for s in previous if s.recorded_action]
    text = "; ".join(parts) or "none"
    return text if len(text) <= MAX_HISTORY_CHARS else "…" + text[-MAX_HISTORY_CHARS:]


class _UnitDoFn(StageDoFn):
    """A unit builder of stage ``infer``: only the inputs it dead-letters count (``total``); units are not
    ``forwarded`` (the model DoFn counts them)."""

    stage = STAGE
    count_inputs = False
    count_forwarded = False

    def __init__(self, config: VlmConfig):
        super().__init__(config.run_id)
        self._config = config


class _EpisodeSteps(_UnitDoFn):
    """(episode_id, its screenshots) → one step :class:`Work` per step, with up to ``history`` earlier frames."""

    def handle(self, item):
        episode_id, shots = item
        shots = sorted(shots, key=lambda s: (s.step_index, s.source_uri))
        task = next((s.episode_task for s in shots if s.episode_task), None)
        recipe = self._config.get_recipe()
        if recipe.kind == "task":
            yield from self._task_unit(episode_id, shots)
            return
        if task is None and recipe.kind == "explain":
            task = recipe.defaults["task"]
        if task is None:
            for s in shots:
                self.counters.total.inc()
                msg = f"episode {episode_id} has no task (task_en/task/goal/instruction) to condition a step on"
                yield Failure(f"{episode_id}#step={s.step_index}", "episode_without_task", msg, s.source_uri)
            return
        n = self._config.history
        explain = self._config.get_recipe().kind == "explain"
        for i, shot in enumerate(shots):
            previous = tuple(shots[max(0, i - n) : i])
            fields = (("task", task), ("history", _history_text(shots[:i])))
            if not explain:
                yield Work(key=f"{episode_id}#{shot.step_index}", shot=shot, history=previous, fields=fields)
                continue
            yield from self._explain_units(episode_id, shot, previous, fields)

    def _task_unit(self, episode_id: str, shots: list[Screenshot]):
        """One unit for the whole episode: its last frame, up to 3 earlier ones (first and evenly spaced) as history,
        and its actions in order as the ``actions`` field; a step whose recorded action does not parse dead-letters
        the episode (``bad_recorded_action``)."""
        lines = []
        for shot in shots:
            try:
                lines += [f"{len(lines) + 1}. {text}" for text in _action_texts(shot)]
            except ValueError as e:
                self.counters.total.inc()
                yield Failure(f"{episode_id}#step={shot.step_index}", "bad_recorded_action", str(e), shot.source_uri)
                return
        picked = [shots[i] for i in task_frames(len(shots))]
        fields = (("actions", "\n".join(lines) or "none"),)
        yield Work(f"{episode_id}#task", picked[-1], tuple(picked[:-1]), fields)

    def _explain_units(self, episode_id: str, shot: Screenshot, previous, fields):
        """One unit per recorded UI action of the step; reasoning-only steps are counted ``ignored``."""
        where = f"{episode_id}#step={shot.step_index}"
        try:
            actions = ui_actions(shot.recorded_action)
        except ValueError as e:
            self.counters.total.inc()
            yield Failure(where, "bad_recorded_action", str(e), shot.recorded_action or "")
            return
        if not actions:
            self.counters.counter("ignored").inc()
        for k, action in enumerate(actions):
            described = (*fields, ("action", action.describe(shot.width, shot.height)))
            yield Work(f"{episode_id}#{shot.step_index}#{k}", shot, previous, described, action)


def _action_texts(shot: Screenshot) -> list[str]:
    """The instructions of a step's recorded actions: an explored action's template instruction (with ``nothing
    changed`` / ``blocked`` when so), else its one-line description.

    Raises:
        ValueError: the recorded action does not parse (:func:`screenmill.annotators.recorded.ui_actions`).
    """
    if not shot.recorded_action:
        return []
    try:
        value = json.loads(shot.recorded_action)
    except ValueError:
        value = None
    explored = recorded_instruction(value) if isinstance(value, dict) else None
    if explored is None:
        return [a.describe(shot.width, shot.height) for a in ui_actions(shot.recorded_action)]
    notes = [note for key, note in (("noop", "nothing changed"), ("blocked", "blocked")) if value.get(key)]
    return [explored + (f" ({', '.join(notes)})" if notes else "")]


def _by_episode(shot: Screenshot):
    """(episode_id, shot) for episode steps; a loose screenshot is counted ``ignored`` (it has no step to label)."""
    if shot.episode_id is None or shot.step_index is None:
        Metrics.counter(METRICS_PREFIX + STAGE, "ignored").inc()
        return []
    return [(shot.episode_id, shot)]


def _basename(uri: str) -> str:
    return posixpath.basename(uri.replace("\\", "/"))


class _JoinInstructions(_UnitDoFn):
    """(image key, {shots, instructions, done}) → localize :class:`Work`; instructions with no image are
    dead-lettered, unless the image is a file skipped as done (counted ``skipped_done``)."""

    def handle(self, item):
        key, grouped = item
        shots = list(grouped["shots"])
        if shots:  # every line, repeats included: _OneRequestPerInstruction labels one and accounts for the rest
            shot = first_occurrence(shots)
            describe = self._config.get_recipe().kind == describing.KIND
            for text in grouped["instructions"]:
                if describe:
                    yield from self._element(shot, text)
                    continue
                yield Work(key=f"{shot.screenshot_id}#{text}", shot=shot, fields=(("instruction", text),))
            return
        if any(grouped.get("done", ())):  # labelled by an earlier run under this config: nothing to do
            self.counters.counter("skipped_done").inc(len(list(grouped["instructions"])))
            return
        c, path = self.counters, self._config.instructions
        lines = Counter(grouped["instructions"])
        for text in sorted(lines):
            c.total.inc()
            msg = f"no input screenshot has the file name or content id {key!r}"
            yield Failure(f"{key}#instruction={text}", "instruction_without_image", msg, path)
            for copy in range(2, lines[text] + 1):
                c.total.inc()
                msg = f"the same image and instruction as an earlier line of the file ({lines[text]} in all)"
                yield Failure(f"{key}#instruction={text}#copy={copy}", "duplicate_instruction", msg, path)

    def _element(self, shot: Screenshot, box_text: str):
        """A describe unit of ``shot``'s element at ``box_text`` (pixels), or ``element_outside_image``."""
        box = describing.box_of({describing.BOX_FIELD: box_text})
        if not describing.inside(box, shot.width, shot.height):
            self.counters.total.inc()
            msg = f"the element box [{box_text}] is not inside the {shot.width}x{shot.height} screenshot"
            yield Failure(f"{shot.source_uri}#box={box_text}", "element_outside_image", msg, self._config.instructions)
            return
        fields = describing.prompt_fields(box, shot.width, shot.height)
        yield Work(key=f"{shot.screenshot_id}#{box_text}", shot=shot, fields=fields)


class _OneRequestPerInstruction(_UnitDoFn):
    """(work key, units) → one unit; the others (the same screenshot and instruction on several lines, by file name
    or content id alike) are dead-lettered as ``duplicate_instruction``."""

    def handle(self, item):
        key, units = item
        units = list(units)
        yield units[0]
        for copy in range(2, len(units) + 1):
            self.counters.total.inc()
            msg = f"the same screenshot and instruction as another line of the file ({len(units)} in all)"
            yield Failure(f"{key}#copy={copy}", "duplicate_instruction", msg, self._config.instructions)


def _copy_names(item):
    """(kept screenshot's uri, {shot, copy}) → (file name of each duplicate copy, kept screenshot)."""
    _, grouped = item
    shots = list(grouped["shot"])
    if shots:
        shot = first_occurrence(shots)
        for name in set(grouped["copy"]) - {_basename(shot.source_uri)}:
            yield name, shot


def _parse_instruction(line: str, path: str):
    """One JSONL line → (image key, instruction); a bad line raises ValueError naming the file."""
    try:
        obj = json.loads(line)
        image = obj.get("image") or obj.get("img_filename")
        instruction = obj["instruction"]
        if not isinstance(image, str) or not image or not isinstance(instruction, str) or not instruction.strip():
            raise ValueError("needs a non-empty 'image' (or 'img_filename') and 'instruction'")
    except (ValueError, KeyError, AttributeError) as e:
        raise ValueError(f"{path}: bad instruction line {line[:200]!r}: {e}") from None
    return _basename(image), " ".join(instruction.split())


def work_units(
    shots: beam.PCollection,
    cfg: VlmConfig,
    duplicates: beam.PCollection | None,
    skipped: beam.PCollection | None = None,
) -> StageOutputs:
    """Screenshots → the recipe kind's work units (``good``) + a list of dead-letter PCollections (the inputs that
    make none)."""
    kind = cfg.get_recipe().kind
    if kind == "propose":
        work = (
            shots
            | "ByContent" >> beam.Map(lambda s: (s.screenshot_id, s))
            | "OnePerImage" >> beam.CombinePerKey(first_occurrence)
            | "ToWork" >> beam.Map(lambda kv: Work(key=kv[0], shot=kv[1]))
        )
        return StageOutputs(work, [])
    if kind in ("localize", describing.KIND):
        return localize_units(shots, cfg, duplicates, skipped)
    grouped = shots | "ByEpisode" >> beam.FlatMap(_by_episode) | "Episodes" >> beam.GroupByKey()
    out = grouped | "ToWork" >> beam.ParDo(_EpisodeSteps(cfg)).with_outputs(DEAD_LETTER, main="good")
    return StageOutputs(out.good, [out.dead_letter])


def localize_units(
    shots: beam.PCollection,
    cfg: VlmConfig,
    duplicates: beam.PCollection | None,
    skipped: beam.PCollection | None = None,
) -> StageOutputs:
    """Screenshots x the instructions file → one unit per (screenshot, instruction), or per (screenshot, element
    box) for a describe recipe (lines ``{"image", "box"}``, :func:`screenmill.annotators.recipes_describe.
    parse_element_line`; a box outside its screenshot is ``element_outside_image``); ``dead_letter`` is a list
    (the join's and the repeats'). ``skipped``: (path, content id) of the files ingest skipped as done, whose
    instructions are only counted (``skipped_done``)."""
    path = cfg.instructions
    parse = describing.parse_element_line if cfg.get_recipe().kind == describing.KIND else _parse_instruction
    instructions = (
        shots.pipeline
        | "ReadInstructions" >> beam.io.ReadFromText(path)
        | "SkipBlank" >> beam.Filter(lambda line: line.strip())
        | "ParseInstructions" >> beam.Map(parse, path)
    )
    keyed = shots | "ByName" >> beam.FlatMap(lambda s: [(_basename(s.source_uri), s), (s.screenshot_id, s)])
    if duplicates is not None:
        copies = duplicates | "CopyOf" >> beam.Map(lambda a: (a.kept_uri, _basename(a.copy_uri)))
        by_uri = shots | "ByUri" >> beam.Map(lambda s: (s.source_uri, s))
        aliases = (
            {"shot": by_uri, "copy": copies}
            | "KeptShot" >> beam.CoGroupByKey()
            | "CopyNames" >> beam.FlatMap(_copy_names)
        )
        keyed = (keyed, aliases) | "AllNames" >> beam.Flatten()
    if skipped is None:
        skipped = shots.pipeline | "NoneSkipped" >> beam.Create([])
    done = skipped | "DoneNames" >> beam.FlatMap(lambda s: [(_basename(s[0]), True), (s[1], True)])
    joined = {"shots": keyed, "instructions": instructions, "done": done} | "Join" >> beam.CoGroupByKey()
    joined = joined | "ToWork" >> beam.ParDo(_JoinInstructions(cfg)).with_outputs(DEAD_LETTER, main="good")
    requests = joined.good | "ByRequest" >> beam.Map(lambda w: (w.key, w)) | "Requests" >> beam.GroupByKey()
    once = requests | "OncePerRequest" >> beam.ParDo(_OneRequestPerInstruction(cfg)).with_outputs(
        DEAD_LETTER, main="good"
    )
    units = once.good if cfg.pack == 1 else pack_units(once.good, cfg.pack)
    return StageOutputs(units, [joined.dead_letter, once.dead_letter])


def _packs(item, k: int):
    """(screenshot id, its localize units) → packed units of up to ``k``, by instruction in order (the same packs on
    every run of the same inputs)."""
    screenshot_id, units = item
    units = sorted(units, key=lambda w: w.key)
    for start in range(0, len(units), k):
        chunk = tuple(units[start : start + k])
        yield Work(key=f"{screenshot_id}#pack={start // k}", shot=chunk[0].shot, pack=chunk)


def pack_units(units: beam.PCollection, k: int) -> beam.PCollection:
    """Localize units → packed units: each screenshot's instructions, ``k`` per request."""
    return (
        units
        | "ByScreenshot" >> beam.Map(lambda w: (w.shot.screenshot_id, w))
        | "Screenshots" >> beam.GroupByKey()
        | "Pack" >> beam.FlatMap(_packs, k)
    )


def _locality_key(work: Work) -> str:
    """The screenshot (propose, localize) or episode (step, explain) a unit belongs to: the first part of its key."""
    return work.key.split("#", 1)[0]


class FanOut(beam.PTransform):
    """Work units → the same units redistributed over the workers, those with one locality key kept together."""

    def expand(self, work):
        return (
            work
            | "ByLocality" >> beam.Map(lambda w: (_locality_key(w), w))
            | "Reshuffle" >> ReshufflePerKey()
            | "Units" >> beam.Values()
        )
