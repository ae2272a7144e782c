"""Records, pyarrow schemas, the table catalogue, identities (keys), coordinate converters and image normalisation
shared by every stage."""

from schemas.keys import stable_id
from schemas.records import (
    SCHEMA_VERSION,
    ActionStep,
    DeadLetter,
    GroundingLabel,
    Screenshot,
    TilePlan,
    utcnow,
)
from schemas.tables import TABLES

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
