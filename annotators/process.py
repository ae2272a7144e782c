"""One model per worker process: :func:`per_process` builds it on first use and shares it with every DoFn instance
and thread of the process, across bundles and pipelines (:func:`held`, :func:`release` look at and drop it).

The label producers' models (:meth:`screenmill.annotators.producer.LabelProducer.load`: the OCR annotator, the vLLM
engine through :meth:`screenmill.annotators.vllm.engine.SharedEngine.get`) and the rendering stage's browser are held
this way. A leaf module (the standard library only), so the engine and the stages import it without the producer seam.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any


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
