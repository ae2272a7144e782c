"""What a label producer's work yields besides labels, shared by the seam (:mod:`screenmill.annotators.producer`) and
the label transforms (:mod:`screenmill.annotators.screenshot`, :mod:`screenmill.annotators.vllm.expand`): the output
types of ``produce()`` (:class:`Failed`, :class:`Count`, :data:`Produced`) and the names of the labelling stage's
extra outputs (:data:`ACTIONS`, :data:`FAILURES`). A leaf module (records only), so none of them forms a cycle.
"""

from __future__ import annotations

import dataclasses

from screenmill.schemas.records import ActionStep, GroundingLabel, Rejected

#: The labelling stage's output of action steps (producers that ``makes_actions``).
ACTIONS = "actions"
#: The labelling stage's output of retryable failures (:class:`screenmill.stages.done.LabelFailure`).
FAILURES = "failures"


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


#: What a screenshot-at-a-time producer yields for a screenshot.
Produced = GroundingLabel | ActionStep | Failed | Count


class AnswerRejected(Rejected):
    """A model answer that cannot become a label; ``reason`` is a stable dead-letter code (raised by the recipes'
    parsers, :mod:`screenmill.annotators.recipes` and :mod:`screenmill.annotators.recipes_describe`)."""
