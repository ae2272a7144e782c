"""Beam PTransforms, one verb-noun transform per module; each returns good output plus a dead-letter output."""
