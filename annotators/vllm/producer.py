"""The vLLM label producer: its identity, its per-process engine and its label transform, behind
:class:`screenmill.annotators.producer.LabelProducer`.

Its work does not come one screenshot at a time: requests fan out over instructions or episode steps and are fed to
one continuously stepped engine, so it supplies a label transform of its own (:class:`VlmProducer.label_transform`:
:class:`screenmill.annotators.vllm.expand.VlmRequests`), whose model DoFn loads the engine through
:meth:`VlmProducer.load`. It has no ``produce()``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable

from screenmill.annotators.producer import LabelInputs, LabelProducer
from screenmill.annotators.vllm.config import INSTALL_HINT, EngineConfig
from screenmill.annotators.vllm.engine import SharedEngine
from screenmill.annotators.vllm.expand import VlmRequests


@dataclasses.dataclass(frozen=True)
class VlmProducer(LabelProducer):
    """A vision-language model served by vLLM (stage ``infer``): grounding labels and action steps.

    Attributes:
        engine: the vLLM engine settings.
    """

    engine: EngineConfig

    stage = "infer"
    step = "RunVlm"
    makes_actions = True
    install_hint = INSTALL_HINT

    @property
    def name(self) -> str:
        """``vllm:<model name>``: the model's last path component, so ids do not depend on where it is stored."""
        return "vllm:" + self.engine.model.rstrip("/").split("/")[-1]

    @property
    def version(self) -> str:
        """The loaded engine's version (vLLM's and the model's); needs :meth:`load` first."""
        engine = SharedEngine.current()
        return engine.engine.VERSION

    def process_key(self) -> Hashable:
        return self.engine

    def load(self) -> SharedEngine:
        """This process's engine for :attr:`engine` (:meth:`SharedEngine.get`, one per process through
        :func:`screenmill.annotators.process.per_process`), after checking the architecture's imports in this worker's
        environment (which may not be the driver's), so a worker that cannot load the model refuses before it builds
        anything.

        Raises:
            ImportError: vLLM (with :attr:`install_hint`) or an architecture's module is missing; whatever
                ``vllm.LLM`` raises for a model it cannot load.
        """
        self.engine.check_imports()
        return SharedEngine.get(self.engine)

    def label_transform(self, inputs: LabelInputs) -> VlmRequests:
        """Work units by recipe kind of ``inputs.config`` (a :class:`screenmill.stages.label.vlm.VlmConfig`), fanned
        out to the engine (see :mod:`screenmill.annotators.vllm.expand`)."""
        return VlmRequests(inputs.config, inputs.resource_hints, inputs.duplicates, inputs.feeding, inputs.skipped)
