"""The label-producer seam: what the labelling stage (:class:`screenmill.stages.label.LabelScreenshots`) runs.

A :class:`LabelProducer` turns one screenshot, with its verified pixels, into grounding labels and / or action steps,
or says why it cannot (:class:`Failed`). It declares its ``name`` and ``version`` (stamped on every row), the
``stage`` its dead letters and counters are filed under, and how its model is loaded: :meth:`LabelProducer.load`
runs once per worker process (heavy imports inside, with :attr:`LabelProducer.install_hint` in the error) and what
it returns is shared by every DoFn instance and thread of the process through :func:`per_process`.

The OCR producer (:class:`screenmill.annotators.ocr_producer.OcrProducer`) is one; a DOM-label producer from rendered
pages plugs in the same way. The vLLM producer (:class:`screenmill.annotators.vllm.producer.VlmProducer`) has the same
identity and loading but its work is not one screenshot at a time (requests fan out over instructions or episode steps
and a continuously fed engine answers them): it says so with ``expansion = "requests"`` and the stage runs its request
expansion.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Hashable, Iterable
from typing import Any

from screenmill.schemas.records import ActionStep, GroundingLabel, Screenshot


@dataclasses.dataclass(frozen=True, slots=True)
class Failed:
    """A screenshot a producer could not label.

    Attributes:
        reason: a stable reason code (the stage's ``dropped_<reason>`` counter and dead-letter ``reason``).
        error: a human-readable explanation.
        payload_ref: where the rejected payload is (None: the screenshot's file).
    """

    reason: str
    error: str
    payload_ref: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Count:
    """A count a producer reports about a screenshot it labelled (the stage adds ``n`` to its counter ``name``,
    ``screenmill.<stage>/<name>``, shown in the run manifest's stage counts); no row is written.

    Attributes:
        name: the counter's name (e.g. ``unread_text_lines``).
        n: how much to add.
    """

    name: str
    n: int = 1


#: What a producer yields for a screenshot.
Produced = GroundingLabel | ActionStep | Failed | Count


class LabelProducer:
    """Base of a label producer; subclasses set the class attributes and implement :meth:`load` and :meth:`produce`.

    Attributes:
        stage: the labelling stage's name for this producer: dead letters ``_dead_letter/<stage>``, counters
            ``screenmill.<stage>``.
        step: the Beam step name the stage is applied under in ``screenmill run`` (kept stable: graph tests, worker
            names and Dataflow job updates refer to it).
        expansion: ``"screenshot"``: :meth:`produce` is called once per distinct screenshot with its pixels;
            ``"requests"``: the producer's work units are its own (see :mod:`screenmill.stages.label`).
        install_hint: how to install what :meth:`load` imports (in its ImportError / RuntimeError).
        max_batch_size: upper bound of the screenshot batches handed to one DoFn call.
        makes_actions: whether it makes action steps (the stage then has an ``actions`` output).
    """

    stage: str = "label"
    step: str = "Label"
    expansion: str = "screenshot"
    install_hint: str = ""
    max_batch_size: int = 8
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
        """Build the model (heavy imports here); called once per worker process through :func:`per_process`."""
        return None

    def produce(self, model: Any, shot: Screenshot, pixels) -> Iterable[Produced]:
        """One screenshot and its verified pixels (an RGB ``numpy`` array) → labels / action steps / :class:`Failed`.

        An exception raised here is the screenshot's ``annotator_failure`` (nothing it yielded is kept).
        """
        raise NotImplementedError


class _Slots:
    """This process's loaded models, one per slot, each slot with a lock of its own (a model that takes minutes to
    load blocks only its own slot)."""

    lock = threading.Lock()
    locks: dict[str, threading.Lock] = {}
    current: dict[str, tuple[Hashable, Any]] = {}

    @classmethod
    def of(cls, slot: str) -> threading.Lock:
        with cls.lock:
            return cls.locks.setdefault(slot, threading.Lock())


def per_process(slot: str, key: Hashable, build: Callable[[], Any], close: Callable[[Any], None] | None = None):
    """The one model of ``slot`` in this worker process, built by ``build()`` on first use and kept across DoFn
    instances, threads, bundles and pipelines; a different ``key`` closes the old one (``close``) before the new one
    is built, so a process never holds two of a slot (device memory, process-global state).

    The OCR producer's annotator and the vLLM engine (:meth:`screenmill.annotators.vllm.engine.SharedEngine.get`) are
    held this way. ``build`` runs on the calling thread: a model bound to a thread of its own (the vLLM engine) starts
    that thread in ``build`` and routes its calls there itself.

    Raises:
        Whatever ``build`` raises (nothing is kept then).
    """
    with _Slots.of(slot):
        held = _Slots.current.get(slot)
        if held is not None and held[0] == key:
            return held[1]
        if held is not None:
            del _Slots.current[slot]
            if close is not None:
                close(held[1])
        model = build()
        _Slots.current[slot] = (key, model)
        return model


def held(slot: str) -> Any:
    """The model ``slot`` holds in this process now (None: none)."""
    current = _Slots.current.get(slot)
    return None if current is None else current[1]


def release(slot: str, close: Callable[[Any], None] | None = None) -> None:
    """Drop (and ``close``) the model of ``slot`` in this process, if any; the next :func:`per_process` builds anew."""
    with _Slots.of(slot):
        current = _Slots.current.pop(slot, None)
        if current is not None and close is not None:
            close(current[1])
