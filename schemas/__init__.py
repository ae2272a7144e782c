"""Records, pyarrow schemas, coordinate converters and image normalisation shared by every stage."""

from schemas.records import (
    SCHEMA_VERSION,
    TABLES,
    ActionStep,
    DeadLetter,
    GroundingLabel,
    Screenshot,
    TilePlan,
    stable_id,
    utcnow,
)

__all__ = [
    "SCHEMA_VERSION",
    "TABLES",
    "ActionStep",
    "DeadLetter",
    "GroundingLabel",
    "Screenshot",
    "TilePlan",
    "stable_id",
    "utcnow",
]
