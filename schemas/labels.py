"""The one way a :class:`~screenmill.schemas.records.GroundingLabel` is built, whoever produced it (OCR, a VLM, a
recording).

A :class:`LabelBuilder` is made per screenshot and per answer: it stamps the screenshot's frame and the producer's
provenance on every label, and tells repeated instructions on one screenshot apart by their order of arrival
(``occurrence`` 0, 1, …), so ``label_id`` = hash(screenshot, annotator, recipe version, instruction, occurrence) is
stable across runs and machines.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from screenmill.schemas.records import GroundingLabel, Screenshot


@dataclasses.dataclass(frozen=True, slots=True)
class LabelProvenance:
    """Who made a label and under which settings: the last six columns of every ``grounding`` row.

    Attributes:
        annotator: the producer's name (part of ``label_id``).
        annotator_version: its version.
        recipe: the recipe (prompt or rule) name; ``recipe_version`` its version (part of ``label_id``).
        config_hash: hash of everything that determines the output.
        run_id: the run that made the label.
    """

    annotator: str
    annotator_version: str
    recipe: str
    recipe_version: str
    config_hash: str
    run_id: str


def _floats(values: Sequence[float] | None) -> list[float] | None:
    return None if values is None else [float(v) for v in values]


class LabelBuilder:
    """Grounding labels of one screenshot from one producer's answer, ids numbered per repeated instruction.

    Args:
        shot: the screenshot the labels are about (its id and oriented size are stamped on every label).
        provenance: who made them (:class:`LabelProvenance`).
        coord_system: the producer's native coordinate system (``pixel``, ``pixel_resized``, ``norm_1000`` …).
        ref_size: ``(width, height)`` of the frame the native numbers refer to; defaults to the screenshot's size.
    """

    __slots__ = ("_shot", "_prov", "_coord_system", "_ref", "_seen")

    def __init__(
        self,
        shot: Screenshot,
        provenance: LabelProvenance,
        coord_system: str = "pixel",
        ref_size: tuple[int, int] | None = None,
    ):
        self._shot = shot
        self._prov = provenance
        self._coord_system = coord_system
        self._ref = ref_size if ref_size is not None else (shot.width, shot.height)
        self._seen: dict[str, int] = {}

    def add(
        self,
        instruction: str,
        box: Sequence[float],
        point: Sequence[float],
        *,
        element_text: str | None,
        role: str | None,
        native_box: Sequence[float] | None,
        native_point: Sequence[float] | None,
        confidence: float,
    ) -> GroundingLabel:
        """One label: ``box`` ``(x0, y0, x1, y1)`` and ``point`` ``(x, y)`` in original-image pixels.

        The n-th label with the same ``instruction`` from this builder gets occurrence n-1 in its ``label_id``.

        Returns:
            The :class:`GroundingLabel` (nothing is checked here: producers clamp and validate before).
        """
        shot, prov = self._shot, self._prov
        occurrence = self._seen.get(instruction, 0)
        self._seen[instruction] = occurrence + 1
        return GroundingLabel(
            label_id=GroundingLabel.make_id(
                shot.screenshot_id, prov.annotator, prov.recipe_version, instruction, occurrence
            ),
            screenshot_id=shot.screenshot_id,
            image_width=shot.width,
            image_height=shot.height,
            instruction=instruction,
            element_text=element_text,
            role=role,
            x0=float(box[0]),
            y0=float(box[1]),
            x1=float(box[2]),
            y1=float(box[3]),
            click_x=float(point[0]),
            click_y=float(point[1]),
            coord_system=self._coord_system,
            native_box=_floats(native_box),
            native_point=_floats(native_point),
            ref_width=self._ref[0],
            ref_height=self._ref[1],
            confidence=float(confidence),
            annotator=prov.annotator,
            annotator_version=prov.annotator_version,
            recipe=prov.recipe,
            recipe_version=prov.recipe_version,
            config_hash=prov.config_hash,
            run_id=prov.run_id,
        )
