"""Trainer row formats of the training export: one sample (images + turns) → a row TRL, LLaMA-Factory or ms-swift
reads as it is, and the ``datasets`` features of those rows.

Every format has an ``images`` column: a list of ``datasets.Image`` (bytes + file name), in the order of the image
placeholders; the first user turn carries all of them. Columns by format:

``trl``          ``messages``: ``[{role, content: [{type: "image"|"text", text}]}]``, every ``content`` a list (Arrow
                 cannot mix string and list contents in one column), image items first in the first user turn, their
                 ``text`` null: the shape TRL's ``SFTTrainer`` and its vision collator take for ``messages`` +
                 ``images`` datasets (the processor's own chat template places the image tokens).
``llamafactory`` ``messages``: ``[{role, content}]`` strings with one ``<image>`` per image (LLaMA-Factory's sharegpt
                 format with OpenAI-style tags: ``dataset_info.json`` maps ``messages`` / ``images`` and the
                 ``role`` / ``content`` / ``user`` / ``assistant`` tags; :func:`dataset_info`). The features are
                 those of LLaMA-Factory's own multimodal demo set (``BUAADreamer/mllm_demo``: ``messages`` list of
                 ``{role, content}`` strings, ``images`` a sequence of ``Image``).
``swift``        ``messages`` as for LLaMA-Factory (ms-swift's standard ``messages`` + ``images`` keys) and
                 ``objects``: for a box target's grounding rows ``{ref, bbox, bbox_type: "real", image_id}`` with
                 ``<ref-object>`` in the prompt and ``<bbox>`` as the answer, so ms-swift itself writes the box in the
                 model's convention (``real`` = original pixels); null for other rows, whose answers are text in the
                 target's coordinates.

Provenance columns, the same for all: ``screenshot_id`` (the current screenshot), ``label_ids``, ``annotator``,
``recipe``, ``review`` (one per turn: ``accept``, ``fix`` or ``unreviewed``), ``episode_id`` and ``step``
(navigation), ``target``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

IMAGE_TOKEN = "<image>"

_IMAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
_PROVENANCE = [
    ("screenshot_id", pa.string()),
    ("label_ids", pa.list_(pa.string())),
    ("annotator", pa.list_(pa.string())),
    ("recipe", pa.list_(pa.string())),
    ("review", pa.list_(pa.string())),
    ("episode_id", pa.string()),
    ("step", pa.int32()),
    ("target", pa.string()),
]
_PLAIN_MESSAGES = pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
_TRL_MESSAGES = pa.list_(
    pa.struct(
        [("role", pa.string()), ("content", pa.list_(pa.struct([("type", pa.string()), ("text", pa.string())])))]
    )
)
_OBJECTS = pa.struct(
    [
        ("ref", pa.list_(pa.string())),
        ("bbox", pa.list_(pa.list_(pa.float64()))),
        ("bbox_type", pa.string()),
        ("image_id", pa.list_(pa.int32())),
    ]
)


@dataclasses.dataclass(frozen=True, slots=True)
class Turn:
    """One exchange: the user's text, the assistant's answer, and (swift, box targets) the object it grounds."""

    prompt: str
    answer: str
    ref: str | None = None
    bbox: tuple[float, float, float, float] | None = None  # original pixels
    swift_prompt: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Sample:
    """A format-free training row: images (``(bytes, file name)`` when rendered; screenshot ids while planned),
    turns, provenance."""

    images: tuple
    turns: tuple[Turn, ...]
    provenance: Mapping[str, Any]


def arrow_schema(fmt: str) -> pa.Schema:
    """The Arrow schema of a format's rows (without the ``huggingface`` features metadata)."""
    messages = _TRL_MESSAGES if fmt == "trl" else _PLAIN_MESSAGES
    fields = [("images", pa.list_(_IMAGE)), ("messages", messages)]
    if fmt == "swift":
        fields.append(("objects", _OBJECTS))
    return pa.schema(fields + _PROVENANCE)


def features(fmt: str):
    """The ``datasets.Features`` of a format (``images`` a list of ``Image``), whose ``arrow_schema`` carries the
    metadata that makes ``datasets`` decode the images.

    Raises:
        ImportError: ``datasets`` is not installed (with the install hint).
    """
    from screenmill.stages.export.repo import import_optional

    datasets = import_optional("datasets")
    plain = datasets.Features.from_arrow_schema(arrow_schema(fmt))
    return datasets.Features({k: datasets.List(datasets.Image()) if k == "images" else v for k, v in plain.items()})


def render(fmt: str, sample: Sample) -> dict[str, Any]:
    """The row of ``sample`` in format ``fmt`` (a dict matching :func:`arrow_schema`)."""
    images = [{"bytes": data, "path": name} for data, name in sample.images]
    row: dict[str, Any] = {"images": images, **sample.provenance}
    if fmt == "trl":
        messages = []
        for i, turn in enumerate(sample.turns):
            parts = [{"type": "image", "text": None} for _ in images] if i == 0 else []
            messages.append({"role": "user", "content": parts + [{"type": "text", "text": turn.prompt}]})
            messages.append({"role": "assistant", "content": [{"type": "text", "text": turn.answer}]})
        row["messages"] = messages
        return row
    grounded = fmt == "swift" and all(t.bbox is not None for t in sample.turns)
    messages = []
    for i, turn in enumerate(sample.turns):
        prompt = turn.swift_prompt if grounded else turn.prompt
        head = IMAGE_TOKEN * len(images) if i == 0 else ""
        messages.append({"role": "user", "content": head + prompt})
        messages.append({"role": "assistant", "content": "<bbox>" if grounded else turn.answer})
    row["messages"] = messages
    if fmt == "swift":
        row["objects"] = (
            {
                "ref": [t.ref for t in sample.turns],
                "bbox": [list(t.bbox) for t in sample.turns],
                "bbox_type": "real",
                "image_id": [0] * len(sample.turns),
            }
            if grounded
            else None
        )
    return row


def dataset_info(name: str, splits: Sequence[str]) -> dict[str, Any]:
    """LLaMA-Factory's ``dataset_info.json`` entries for a local export: one dataset per split, its Parquet files.

    Args:
        name: the dataset's name (``<name>`` for train, ``<name>_<split>`` for the others).
        splits: the splits that have files.
    """
    out = {}
    for split in splits:
        out[name if split == "train" else f"{name}_{split}"] = {
            "file_name": f"data/{split}",
            "formatting": "sharegpt",
            "columns": {"messages": "messages", "images": "images"},
            "tags": {
                "role_tag": "role",
                "content_tag": "content",
                "user_tag": "user",
                "assistant_tag": "assistant",
                "system_tag": "system",
            },
        }
    return out
