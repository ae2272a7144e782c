"""The vLLM producer's label transform (:class:`VlmRequests`, from
:meth:`screenmill.annotators.vllm.producer.VlmProducer.label_transform`), which
:class:`screenmill.stages.label.LabelScreenshots` expands (step ``RunVlm``, stage ``infer``): screenshots → requests
for a vision-language model → grounding labels and action steps, + dead letters and retryable failures.

Work units by recipe kind (see :mod:`screenmill.annotators.recipes`; built in :mod:`screenmill.annotators.vllm.units`):

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
  dead-lettered (``episode_without_task``);
* ``explain``: one request per recorded UI action of an episode step → an ``actions`` row (``source='recorded'``)
  and, for actions with a point, a grounding label;
* ``task``: one request per episode (its last frame, up to 3 earlier ones: the first and evenly spaced, and the
  instructions of its actions in order) → one ``actions`` row for the episode as a whole (``step`` -1,
  ``action_type`` ``task``, ``action_args`` ``{"task", "frames"}``, ``source='model'``, no ``screenshot_id``): the
  high-level task the episode accomplishes (reverse task synthesis);
* ``describe``: one request per (screenshot, element box) of a JSONL of ``{"image", "box": [x0, y0, x1, y1]}``
  (pixels; joined like the localize lines): the screenshot and the element's outlined crop → one grounding label
  with the element's box and its purpose as the instruction (:mod:`screenmill.annotators.recipes_describe`); a box
  outside its screenshot is dead-lettered (``element_outside_image``).

Packing (``VlmConfig.pack`` K > 1, localize recipes): a screenshot's instructions go K at a time into one request
(:func:`screenmill.annotators.vllm.units.pack_units`, :meth:`screenmill.annotators.recipes.Recipe.packed`), so its
image is prefilled once for K answers; each item of the answer array is checked on its own and becomes the same label
an unpacked request would give (instruction, boxes, provenance; the recipe version is ``<version>+pack<K>``, the
confidence the packed answer's). An item that fails (its own reason, an array cut short, the engine refusing the packed
request) is sent once more as a request of its own and, failing again, dead-lettered with that answer's raw text and
why the packed one failed.
Counted: ``packed_requests``, ``pack_retries`` (items sent again alone); ``total`` counts every instruction.

Large effective batches: one engine per worker process (:class:`screenmill.annotators.vllm.engine.SharedEngine`), fed
request by request as elements arrive, stepped while the next request is still being decoded or rendered, drained only
at a bundle's end; how is the feeding policy's (:mod:`screenmill.annotators.vllm.feeding`,
``LabelScreenshots(feeding=...)``), packing is vLLM's own scheduler's. Every image is named by its content id
(``Request.image_ids``), so the requests about one screenshot, or a frame in several steps' history, share one
vision-encoder pass. Where the stage's time goes (the engine's :class:`screenmill.annotators.vllm.accounting.Ledger`)
is reported to Beam Metrics at every bundle's end (:mod:`screenmill.stages.label.accounting`) and lands in the run
manifest's ``accounting`` section.

Reason codes: ``changed_during_run`` / image reasons / ``unreadable`` (pixels), ``engine_failure`` (the engine
refused or dropped the request), ``model_output_not_json``, ``model_output_schema``, ``coords_out_of_bounds``
(the answer; ``payload_ref`` holds the raw text), ``instruction_without_image``, ``duplicate_instruction``,
``episode_without_task``, ``element_outside_image``.
"""

from __future__ import annotations

import functools
import json
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

import apache_beam as beam
from apache_beam.transforms.window import GlobalWindow
from apache_beam.utils.timestamp import MIN_TIMESTAMP
from apache_beam.utils.windowed_value import WindowedValue
from screenmill.annotators import recipes_describe as describing
from screenmill.annotators.outputs import ACTIONS, FAILURES
from screenmill.annotators.recipes import TASK_ACTION, TASK_STEP, AnswerRejected, Frame, Target
from screenmill.annotators.vllm.engine import Request
from screenmill.annotators.vllm.feeding import Feeder
from screenmill.annotators.vllm.units import STAGE, FanOut, Work, work_units
from screenmill.schemas.images import ImageRejected
from screenmill.schemas.keys import stable_id
from screenmill.schemas.labels import LabelBuilder, LabelProvenance
from screenmill.schemas.records import ActionStep, GroundingLabel, Screenshot
from screenmill.schemas.verified import read_screenshot
from screenmill.stages.base import DEAD_LETTER, Failure, StageDoFn, StageOutputs
from screenmill.stages.done import label_failure
from screenmill.stages.label.accounting import AccountingMetrics

if TYPE_CHECKING:
    from screenmill.stages.label.vlm import VlmConfig

#: How the model DoFn feeds the engine: :class:`screenmill.annotators.vllm.feeding.Feeder` or a subclass, or any
#: callable with its arguments that returns one (``LabelScreenshots(feeding=...)``).
FeedingPolicy = Callable[..., Feeder]


def _frame(shot: Screenshot) -> Frame:
    plan = shot.tile_plan
    if plan is None:
        return Frame(shot.width, shot.height, shot.width, shot.height)
    return Frame(shot.width, shot.height, plan.resized_width, plan.resized_height)


class _RunEngine(StageDoFn):
    """Work units → labels (main), action steps (``actions``), retryable failures (``failures``), dead letters; see
    the module docstring. How the engine is fed is ``feeding``'s (:mod:`screenmill.annotators.vllm.feeding`), what
    comes back is turned into rows here. Every unit is one input (``total``); every accepted answer one
    ``forwarded``."""

    stage = STAGE
    count_forwarded = False

    def __init__(self, config: VlmConfig, feeding: FeedingPolicy = Feeder):
        super().__init__(config.run_id)
        self._config = config
        self._feeding = feeding

    def start(self):
        self._recipe = self._config.get_recipe()
        self._units: dict[str, Work] = {}  # request key -> its unit, until the unit's outcome
        self._notes: dict[str, str] = {}  # request key of a packed item's retry -> why the packed answer failed it
        self._retries: deque[tuple[Work, str]] = deque()  # packed items to send again on their own, and why
        # the engine first: a worker that cannot load the model refuses before it starts any thread
        holder = self._config.producer().load()
        cfg = self._config
        self._feeder = self._feeding(
            holder,
            decode_threads=cfg.decode_threads,
            render_threads=cfg.render_threads,
            max_in_flight=cfg.max_in_flight,
        )
        self._version = holder.engine.VERSION
        self._accounting = AccountingMetrics(STAGE)

    def teardown(self):
        self._feeder.close()

    def _decode(self, shot: Screenshot):
        image = read_screenshot(shot, self._config.limits)
        if self._config.pre_resize and shot.tile_plan is not None:
            from screenmill.annotators.vllm.tile_plan import resize_for_plan

            image = resize_for_plan(image, shot.tile_plan)
        return image

    def _crop(self, shot: Screenshot, screen, box):
        """The outlined crop of ``shot``'s element ``box`` (original pixels): cut from the decoded screenshot's future
        ``screen``, decoded again when that one is pre-resized (its pixels are not the box's)."""
        pixels = read_screenshot(shot, self._config.limits) if self._config.pre_resize else screen.result()
        return describing.outlined_crop(pixels, box)

    def _image_id(self, shot: Screenshot) -> str:
        """What identifies the pixels sent for ``shot``: its content hash, plus the grid size when pre-resized."""
        plan = shot.tile_plan
        if self._config.pre_resize and plan is not None:
            return f"{shot.screenshot_id}@{plan.resized_width}x{plan.resized_height}"
        return shot.screenshot_id

    def input_ref(self, work: Work) -> str:
        return work.shot.source_uri

    def handle(self, work: Work):
        if work.pack:  # every packed instruction is one input
            self.counters.total.inc(len(work.pack) - 1)
            self.counters.counter("packed_requests").inc()
        yield from self._submit(work)
        yield from self._retry_unpacked()

    def _submit(self, work: Work, note: str | None = None):
        """Hand ``work``'s request to the feeder; yield the rows of whatever finished meanwhile. ``note``: why this
        request is a packed instruction's retry (said in its dead letter if it fails again)."""
        key = self._feeder.new_key()
        self._units[key] = work
        if note is not None:
            self._notes[key] = note
        shots = (*work.history, work.shot)
        images = [self._feeder.image(s.screenshot_id, functools.partial(self._decode, s)) for s in shots]
        if self._recipe.kind == describing.KIND:  # the element's crop, cut from the screenshot's own pixels
            box = describing.box_of(dict(work.fields))
            crop = functools.partial(self._crop, work.shot, images[-1], box)
            images.append(self._feeder.image(describing.crop_id(work.shot.screenshot_id, box), crop))
        yield from self._outcomes(self._feeder.add(key, images, functools.partial(self._request, work, key)))

    def _retry_unpacked(self):
        """Send each packed instruction whose item failed as a request of its own (the answers of those may fail
        more items meanwhile: they are sent too)."""
        while self._retries:
            yield from self._submit(*self._retries.popleft())

    def _request(self, work: Work, key: str, pixels: list) -> Request:
        """The unit's engine request, once its pixels are decoded."""
        recipe = self._recipe
        if work.pack:
            text = recipe.pack_prompt([dict(w.fields)["instruction"] for w in work.pack])
            max_tokens = recipe.pack_max_tokens(len(work.pack))
        else:
            text, max_tokens = recipe.prompt(**dict(work.fields)), recipe.max_tokens
        return Request(
            key=key,
            text=text,
            images=pixels,
            schema=self._schema(work),
            max_tokens=max_tokens,
            image_ids=self._image_ids(work),
        )

    def _image_ids(self, work: Work) -> list[str]:
        """The multimodal ids of ``work``'s images, in the order they are sent (a describe unit's crop last)."""
        ids = [self._image_id(s) for s in (*work.history, work.shot)]
        if self._recipe.kind == describing.KIND:
            ids.append(describing.crop_id(work.shot.screenshot_id, describing.box_of(dict(work.fields))))
        return ids

    def _schema(self, work: Work) -> dict:
        """The structured-output schema of ``work``'s request: the recipe's answer, an array of them when packed."""
        return self._recipe.pack_schema(len(work.pack)) if work.pack else self._recipe.answer_schema

    def _outcomes(self, outcomes):
        """The feeder's outcomes → rows: an answer is parsed (:meth:`_finish`, :meth:`_finish_pack`), a unit whose
        pixels failed is dead-lettered with the image's reason (``unreadable`` for any other error), each of a packed
        unit's instructions alike."""
        for outcome in outcomes:
            work = self._units.pop(outcome.key)
            note = self._notes.pop(outcome.key, None)
            if outcome.error is None:
                if work.pack:
                    yield from self._finish_pack(work, outcome.completion)
                else:
                    yield from self._finish(work, outcome.completion, note)
                continue
            e = outcome.error
            for unit in work.pack or (work,):
                uri, input_id = unit.shot.source_uri, self._input_id(unit)
                if isinstance(e, ImageRejected):
                    yield from self._failed(unit, Failure(input_id, e.reason, e.message, uri))
                else:
                    yield from self._failed(unit, Failure(input_id, "unreadable", f"{type(e).__name__}: {e}", uri))

    def _failed(self, work: Work, failure: Failure):
        yield from label_failure(work.shot, failure)
        yield failure

    def _drained(self):
        """Every request to its outcome, the unpacked retries of failed packed items too (a bundle's end)."""
        yield from self._outcomes(self._feeder.drain())
        while self._retries:
            yield from self._retry_unpacked()
            yield from self._outcomes(self._feeder.drain())

    def finish_bundle(self):
        for out in self._drained():
            if isinstance(out, Failure):
                out = beam.pvalue.TaggedOutput(DEAD_LETTER, self.dead_letter(out))
            if isinstance(out, beam.pvalue.TaggedOutput):
                yield beam.pvalue.TaggedOutput(out.tag, WindowedValue(out.value, MIN_TIMESTAMP, [GlobalWindow()]))
            else:
                yield WindowedValue(out, MIN_TIMESTAMP, [GlobalWindow()])
        ledger = self._feeder.ledger
        self._accounting.report(ledger.take(), ledger.engine_id)

    def _input_id(self, work: Work) -> str:
        shot = work.shot
        fields = dict(work.fields)
        if self._recipe.kind in ("step", "explain"):
            return f"{shot.episode_id}#step={shot.step_index}"
        if self._recipe.kind == "task":
            return f"{shot.episode_id}#task"
        if "instruction" in fields:
            return f"{shot.source_uri}#instruction={fields['instruction']}"
        if describing.BOX_FIELD in fields:
            return f"{shot.source_uri}#box={fields[describing.BOX_FIELD]}"
        return shot.source_uri

    def _finish(self, work: Work, completion, note: str | None = None):
        input_id = self._input_id(work)
        after = f" (sent alone after the packed request: {note})" if note else ""
        if completion.error:
            error = completion.error + after
            yield from self._failed(work, Failure(input_id, "engine_failure", error, work.shot.source_uri))
            return
        fields = dict(work.fields)
        try:
            result = self._recipe.answer(completion.text, _frame(work.shot), fields)
        except AnswerRejected as e:
            message = e.message
            if completion.finish_reason == "length":
                message += f" (the answer hit max_tokens={self._recipe.max_tokens})"
            message += after
            yield from self._failed(work, Failure(input_id, e.reason, message, completion.text or "<empty answer>"))
            return
        self.counters.forwarded.inc()
        if self._recipe.kind == "step":
            step = self._action_step(work, result.action_type, result.action_args, result.thought)
            yield beam.pvalue.TaggedOutput(ACTIONS, step)
        elif self._recipe.kind == "explain":
            yield from self._explained(work, result, completion)
        elif self._recipe.kind == "task":
            args = {"frames": [s.step_index for s in (*work.history, work.shot)], "task": result.task}
            task = self._action_step(work, TASK_ACTION, args, None, index=TASK_ACTION, whole_episode=True)
            yield beam.pvalue.TaggedOutput(ACTIONS, task)
        elif self._recipe.kind == describing.KIND:
            yield from self._labels(work, [described_target(fields, result)], completion)
        else:
            yield from self._labels(work, result, completion)

    def _finish_pack(self, work: Work, completion):
        """A packed answer → a label per good item; every other item (a failed item, one the answer never reached,
        all of them when the engine refused the packed request) is queued to be sent again on its own."""
        n = len(work.pack)
        if completion.error:
            results = [AnswerRejected("engine_failure", completion.error)] * n
        else:
            fields = [dict(w.fields) for w in work.pack]
            results = self._recipe.answer_pack(completion.text, _frame(work.shot), fields)
        cut = f" (the packed answer hit max_tokens={self._recipe.pack_max_tokens(n)})"
        for unit, result in zip(work.pack, results, strict=True):
            if isinstance(result, AnswerRejected):
                note = f"{result.reason}: {result.message}" + (cut if completion.finish_reason == "length" else "")
                self._retries.append((unit, note))
                self.counters.counter("pack_retries").inc()
                continue
            self.counters.forwarded.inc()
            yield from self._labels(unit, result, completion)

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
        self,
        work: Work,
        action_type: str,
        args: dict,
        thought: str | None,
        source: str = "model",
        index: str = "0",
        whole_episode: bool = False,
    ) -> ActionStep:
        """An ``actions`` row of the unit's step; ``whole_episode``: of the episode (step :data:`TASK_STEP`, no
        screenshot)."""
        shot, cfg, recipe = work.shot, self._config, self._recipe
        step = TASK_STEP if whole_episode else shot.step_index
        return ActionStep(
            episode_id=shot.episode_id,
            step=step,
            label_id=stable_id(shot.episode_id, step, cfg.annotator, recipe.name, recipe.version, index),
            screenshot_id=None if whole_episode else shot.screenshot_id,
            action_type=action_type,
            action_args=json.dumps(args, sort_keys=True, separators=(",", ":")),
            thought=thought,
            source=source,
            annotator=cfg.annotator,
            annotator_version=self._version,
            recipe_version=recipe.version,
            run_id=cfg.run_id,
        )


def described_target(fields: dict, description) -> Target:
    """A describe unit's answer → its label's target: the element's box (pixels, also the native box), its centre,
    the description as the instruction."""
    box = describing.box_of(fields)
    x0, y0, x1, y1 = (float(v) for v in box)
    return Target(description.instruction, None, None, (x0, y0, x1, y1), ((x0 + x1) / 2, (y0 + y1) / 2), box, None)


class VlmRequests(beam.PTransform):
    """The vLLM labelling stage's graph, which :class:`screenmill.stages.label.LabelScreenshots` expands in its own
    scope (its step names are the old ``RunVlm``'s: ``FanOut``, ``Generate``, ``DeadLetters`` …).

    Fan-out: the work units are redistributed right before the engine (``FanOut``, a per-key reshuffle on the
    screenshot or, for step recipes, the episode, so the units that share images stay together for the image
    cache): the model stage spreads over every worker, and it is the only step of its fused stage, so resource hints
    put it, and nothing else, on accelerator workers.

    Engines: a worker process never holds more than one engine. Every DoFn instance and thread of a process shares
    the process's :class:`screenmill.annotators.vllm.engine.SharedEngine`, built on first use and kept across bundles
    and pipelines, so a worker loads one engine per GPU as long as it runs one process per GPU: on Dask one worker
    process per GPU (``dask worker --nworkers 1`` with its own ``CUDA_VISIBLE_DEVICES``, or dask-cuda's
    ``LocalCUDACluster``), its threads sharing the engine; on Dataflow ``--experiments=no_use_multiple_sdk_containers``
    (else one SDK process per vCPU, each with an engine) and ``count:1`` in the accelerator hint; on the
    FnApiRunner ``--direct_running_mode=in_memory`` or ``multi_threading`` (one process), not ``multi_processing``,
    whose processes would all load onto the first visible GPU.

    Args:
        config: what the model is asked and how.
        hints: Beam resource hints for the model stage (``Generate``) only, e.g.
            ``{"accelerator": "type:nvidia-h100-80gb;count:1;install-nvidia-driver", "min_ram": "64GB"}``.
        duplicates: ingest's ``aliases`` output (:class:`screenmill.stages.ingest.DuplicateAlias`, optional): for
            localize recipes, a file ingest set aside as a ``duplicate`` of another (the same bytes) still names that
            screenshot in the instructions file, so an instruction about either file is labelled, once, on the
            screenshot kept.
        feeding: how the model stage feeds its engine (:data:`FeedingPolicy`; None: continuous,
            :class:`screenmill.annotators.vllm.feeding.Feeder`); execution only, the output does not depend on it.
        skipped: ingest's ``skipped`` output (optional): for localize recipes, the instructions about a file skipped
            as done (an earlier run labelled it under this config) are counted ``skipped_done``, not dead-lettered.

    ``expand``: tiled screenshots → ``good`` labels, ``dead_letter``, ``failures`` (retryable
    :class:`screenmill.stages.done.LabelFailure`), ``actions`` (:class:`screenmill.stages.base.StageOutputs`).
    """

    def __init__(
        self,
        config: VlmConfig,
        hints: dict[str, str] | None = None,
        duplicates: beam.PCollection | None = None,
        feeding: FeedingPolicy | None = None,
        skipped: beam.PCollection | None = None,
    ):
        super().__init__()
        self._config = config
        self._hints = dict(hints or {})
        self._duplicates = duplicates
        self._feeding = feeding
        self._skipped = skipped

    def expand(self, shots):
        config, hints = self._config, self._hints
        units = work_units(shots, config, self._duplicates, self._skipped)
        generate = beam.ParDo(_RunEngine(config, self._feeding or Feeder))
        if hints:
            generate = generate.with_resource_hints(**hints)
        out = (
            units.good
            | "FanOut" >> FanOut()
            | "Generate" >> generate.with_outputs(ACTIONS, DEAD_LETTER, FAILURES, main="good")
        )
        dead = units.dead_letter
        dead_letters = (*dead, out.dead_letter) | "DeadLetters" >> beam.Flatten() if dead else out.dead_letter
        return StageOutputs(out.good, dead_letters, failures=out[FAILURES], actions=out[ACTIONS])
