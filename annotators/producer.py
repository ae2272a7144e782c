"""The label-producer seam: what the labelling stage (:class:`screenmill.stages.label.LabelScreenshots`) runs.

A :class:`LabelProducer` declares its ``name`` and ``version`` (stamped on every row), the ``stage`` its dead letters
and counters are filed under, the Beam ``step`` the stage is applied under, and how its model is loaded:
:meth:`LabelProducer.load` runs once per worker process (heavy imports inside, with
:attr:`LabelProducer.install_hint` in the error) and what it returns is shared by every DoFn instance and thread of
the process through :func:`screenmill.annotators.process.per_process`. Its work is its own: the stage hands what it
was given (:class:`LabelInputs`) to :meth:`LabelProducer.label_transform` and expands the transform that returns,
whatever the producer is.

* Screenshot-at-a-time producers (:class:`ScreenshotProducer`: the OCR producer
  :class:`screenmill.annotators.ocr_producer.OcrProducer`, test producers; a DOM-label producer from rendered pages
  plugs in the same way) implement :meth:`ScreenshotProducer.produce`: one screenshot, with its verified pixels, →
  grounding labels and / or action steps, or why it cannot (:data:`screenmill.annotators.outputs.Produced`); their
  base supplies the transform (:class:`screenmill.annotators.screenshot.AnnotateScreenshots`).
* The vLLM producer (:class:`screenmill.annotators.vllm.producer.VlmProducer`) supplies a transform of its own:
  requests fan out over instructions or episode steps and a continuously fed engine answers them
  (:mod:`screenmill.annotators.vllm.expand`).

Every label transform's ``expand`` returns :class:`screenmill.stages.base.StageOutputs`: ``good`` (labels),
``dead_letter``, ``failures`` (a :class:`screenmill.stages.done.LabelFailure` per failure whose reason is retryable,
:func:`screenmill.stages.done.label_failure`) and, for producers that make them (``makes_actions``), ``actions``
(:mod:`screenmill.annotators.outputs`).

This module imports no Beam: a producer can be built and used outside a pipeline (the truth-set tools do).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import apache_beam as beam
    from screenmill.annotators.outputs import Produced
    from screenmill.annotators.screenshot import AnnotateScreenshots
    from screenmill.schemas.records import Screenshot


@dataclasses.dataclass(frozen=True)
class LabelInputs:
    """What the labelling stage was given, for the producer's transform (each producer uses what it needs).

    Attributes:
        config: the labelling config (:class:`screenmill.stages.label.stage.LabelConfig`: ``run_id``, ``limits``,
            ``producer()`` and the producer's own settings).
        resource_hints: Beam resource hints (``min_ram``, ``accelerator`` …) for the producing ParDo only: the
            grouping and batching around it keep the pipeline's defaults.
        duplicates: ingest's ``aliases`` output (None: none), for the vLLM localize recipes.
        skipped: ingest's ``skipped`` output (files skipped as done; None: none), for the vLLM localize recipes.
        feeding: the vLLM engine's feeding policy (:data:`screenmill.annotators.vllm.expand.FeedingPolicy`; None: its
            default).
    """

    config: Any
    resource_hints: Mapping[str, str] = dataclasses.field(default_factory=dict)
    duplicates: beam.PCollection | None = None
    skipped: beam.PCollection | None = None
    feeding: Any = None


class LabelProducer:
    """Base of a label producer: subclasses set the class attributes and implement :attr:`name`, :attr:`version`,
    :meth:`label_transform` and, when they have a model, :meth:`load`.

    Attributes:
        stage: the labelling stage's name for this producer: dead letters ``_dead_letter/<stage>``, counters
            ``screenmill.<stage>``.
        step: the Beam step name the stage is applied under in ``screenmill run`` (kept stable: graph tests, worker
            names and Dataflow job updates refer to it).
        install_hint: how to install what :meth:`load` imports (in its ImportError / RuntimeError).
        makes_actions: whether it makes action steps (the stage then has an ``actions`` output).
    """

    stage: str = "label"
    step: str = "Label"
    install_hint: str = ""
    makes_actions: bool = False

    @property
    def name(self) -> str:
        """The producer's name (the ``annotator`` column; part of ``label_id``)."""
        raise NotImplementedError

    @property
    def version(self) -> str:
        """The producer's version (the ``annotator_version`` column)."""
        raise NotImplementedError

    def process_key(self) -> Hashable:
        """What identifies the loaded model: producers with equal keys share one in a process."""
        return (type(self).__qualname__,)

    def load(self) -> Any:
        """Build the model (heavy imports here); called once per worker process through
        :func:`screenmill.annotators.process.per_process`."""
        return None

    def label_transform(self, inputs: LabelInputs) -> beam.PTransform:
        """The labelling stage's work for this producer: a transform of tiled screenshots (with repeats) whose
        ``expand`` returns the stage's :class:`screenmill.stages.base.StageOutputs` (see the module docstring). The
        stage expands it in its own scope, so its steps are the stage's sub-steps.

        Args:
            inputs: what the stage was given.
        """
        raise NotImplementedError


class ScreenshotProducer(LabelProducer):
    """Base of a producer that labels one screenshot at a time: subclasses implement :meth:`produce` (and
    :meth:`load` for a model); the label transform is :class:`screenmill.annotators.screenshot.AnnotateScreenshots`.

    Attributes:
        max_batch_size: upper bound of the screenshot batches handed to one DoFn call.
    """

    max_batch_size: int = 8

    def produce(self, model: Any, shot: Screenshot, pixels) -> Iterable[Produced]:
        """One screenshot and its verified pixels (an RGB ``numpy`` array) → labels / action steps /
        :class:`screenmill.annotators.outputs.Failed` / :class:`screenmill.annotators.outputs.Count`.

        An exception raised here is the screenshot's ``annotator_failure`` (nothing it yielded is kept).
        """
        raise NotImplementedError

    def label_transform(self, inputs: LabelInputs) -> AnnotateScreenshots:
        """Each distinct screenshot once, in batches, through :meth:`produce` (see
        :mod:`screenmill.annotators.screenshot`)."""
        from screenmill.annotators.screenshot import AnnotateScreenshots  # Beam: only where a pipeline is built

        return AnnotateScreenshots(self, inputs.config.limits, inputs.config.run_id, inputs.resource_hints)
