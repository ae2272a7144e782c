"""Records, pyarrow schemas, the table catalogue, identities (keys), coordinate converters and image normalisation
shared by every stage."""

from screenmill.schemas.keys import stable_id
from screenmill.schemas.records import (
    SCHEMA_VERSION,
    ActionStep,
    DeadLetter,
    GroundingLabel,
    Screenshot,
    TilePlan,
    utcnow,
)
from screenmill.schemas.tables import TABLES

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
