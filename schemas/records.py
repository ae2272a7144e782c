"""Hand-off records between stages: one slotted dataclass and one explicit pyarrow schema per table.

Every writer passes ``schema=`` from here; nothing is ever inferred from the first batch. Each table carries a
``schema_version`` column so readers can refuse what they do not understand.

Coordinates in every record are **original-image pixels** (after EXIF orientation), ``(x0, y0, x1, y1)`` floats,
plus the native system the producer used (see :mod:`screenmill.schemas.coords`).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

import pyarrow as pa
from screenmill.schemas import keys

SCHEMA_VERSION = 1

_TS = pa.timestamp("us", tz="UTC")


def _f(name: str, typ: pa.DataType, nullable: bool = True) -> pa.Field:
    return pa.field(name, typ, nullable=nullable)


class _Record:
    """Row conversion shared by the records; subclasses set ``SCHEMA``."""

    __slots__ = ()
    SCHEMA: ClassVar[pa.Schema]

    def to_row(self) -> dict[str, Any]:
        row = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}  # type: ignore[arg-type]
        for key, value in row.items():
            if isinstance(value, _Record):
                row[key] = value.to_row()
        row["schema_version"] = SCHEMA_VERSION
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]):
        names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        version = row.get("schema_version", SCHEMA_VERSION)
        if version != SCHEMA_VERSION:
            raise ValueError(f"{cls.__name__}: schema_version {version} is not {SCHEMA_VERSION}")
        return cls(**{k: v for k, v in row.items() if k in names})


@dataclasses.dataclass(frozen=True, slots=True)
class TilePlan(_Record):
    """How the engine's processor cuts one image: ``cols`` × ``rows`` tiles of ``tile_size`` px (+ a thumbnail).

    ``num_tiles`` counts the thumbnail; ``image_tokens`` = ``num_tiles`` × tokens per tile; ``resized_width`` /
    ``resized_height`` is the size the image is resized to before cutting (``cols*tile_size`` × ``rows*tile_size``).
    """

    cols: int
    rows: int
    tile_size: int
    thumbnail: bool
    num_tiles: int
    image_tokens: int
    resized_width: int
    resized_height: int
    rule: str

    SCHEMA: ClassVar[pa.Schema] = pa.schema(
        [
            _f("cols", pa.int16(), False),
            _f("rows", pa.int16(), False),
            _f("tile_size", pa.int32(), False),
            _f("thumbnail", pa.bool_(), False),
            _f("num_tiles", pa.int16(), False),
            _f("image_tokens", pa.int32(), False),
            _f("resized_width", pa.int32(), False),
            _f("resized_height", pa.int32(), False),
            _f("rule", pa.string(), False),
        ]
    )

    def to_row(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


_TILE_STRUCT = pa.struct(list(TilePlan.SCHEMA))


@dataclasses.dataclass(frozen=True, slots=True)
class RenderSettings(_Record):
    """How a rendered screenshot was made: the viewport in CSS px, the device scale factor (screenshot pixels per CSS
    px), mobile emulation, ``prefers-color-scheme``, the scroll offset (CSS px) of the screen and the page's zoom
    (``page_scale``: 1, except a page without a mobile viewport in mobile emulation, shown zoomed out). A screenshot
    pixel (x, y) is the client point (x, y) / (device_scale_factor x page_scale) after the scroll.
    ``blocked_requests``: how many requests of the page the fence aborted while it was rendered."""

    viewport_width: int
    viewport_height: int
    device_scale_factor: float
    mobile: bool
    color_scheme: str
    scroll_x: int
    scroll_y: int
    page_scale: float = 1.0
    blocked_requests: int = 0

    SCHEMA: ClassVar[pa.Schema] = pa.schema(
        [
            _f("viewport_width", pa.int32(), False),
            _f("viewport_height", pa.int32(), False),
            _f("device_scale_factor", pa.float32(), False),
            _f("mobile", pa.bool_(), False),
            _f("color_scheme", pa.string(), False),
            _f("scroll_x", pa.int32(), False),
            _f("scroll_y", pa.int32(), False),
            _f("page_scale", pa.float32()),
            _f("blocked_requests", pa.int32()),
        ]
    )

    def to_row(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


_RENDER_STRUCT = pa.struct(list(RenderSettings.SCHEMA))


@dataclasses.dataclass(frozen=True, slots=True)
class WindowTitle(_Record):
    """The title bar a window manager drew for one top-level window of a desktop app's screen (``--apps``): the
    window's ``title`` (what the bar shows) and the bar's box ``(x0, y0, x1, y1)`` in screenshot pixels (the frame
    above the client window: its geometry from the X server and the window manager's ``_NET_FRAME_EXTENTS``).
    Painted by the window manager, it is in no accessible tree (so in no a11y label)."""

    title: str
    x0: float
    y0: float
    x1: float
    y1: float

    SCHEMA: ClassVar[pa.Schema] = pa.schema(
        [
            _f("title", pa.string(), False),
            _f("x0", pa.float64(), False),
            _f("y0", pa.float64(), False),
            _f("x1", pa.float64(), False),
            _f("y1", pa.float64(), False),
        ]
    )

    def to_row(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


@dataclasses.dataclass(frozen=True, slots=True)
class AppSettings(_Record):
    """Which desktop app a rendered screenshot shows (``--apps``): its ``name``, the command line it was started with
    (``command``, JSON list), the Debian package that owns the executable and that package's version (``dpkg-query``;
    None when no package owns it), the toolkit the app reported on the accessibility bus (``GTK3``, ``GTK4``, ``Qt5``,
    ...) and its version. The display (size, scale) is the screenshot's ``render`` (viewport = the display's logical
    size, ``device_scale_factor`` = its scale). ``window_titles``: the title bars the window manager drew on this
    screen (:class:`WindowTitle`, one per framed top-level window whose bar is not covered; empty without a window
    manager; rows written before they were recorded read back as empty)."""

    name: str
    command: str
    package: str | None
    package_version: str | None
    toolkit: str
    toolkit_version: str
    window_titles: tuple[WindowTitle, ...] = ()

    SCHEMA: ClassVar[pa.Schema] = pa.schema(
        [
            _f("name", pa.string(), False),
            _f("command", pa.string(), False),
            _f("package", pa.string()),
            _f("package_version", pa.string()),
            _f("toolkit", pa.string(), False),
            _f("toolkit_version", pa.string(), False),
            _f("window_titles", pa.list_(pa.struct(list(WindowTitle.SCHEMA)))),
        ]
    )

    def to_row(self) -> dict[str, Any]:
        row = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        row["window_titles"] = [t.to_row() for t in self.window_titles]
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> AppSettings:
        """The record of a row (``window_titles`` None, a row written before they were recorded: none)."""
        row = dict(row)
        row["window_titles"] = tuple(WindowTitle(**t) for t in row.get("window_titles") or ())
        return cls(**row)


_APP_STRUCT = pa.struct(list(AppSettings.SCHEMA))


@dataclasses.dataclass(frozen=True, slots=True)
class Screenshot(_Record):
    """One accepted input image (an occurrence: the same bytes may be several steps of one episode).

    ``screenshot_id`` is the sha256 of the file's bytes. ``width``/``height`` are after EXIF orientation, i.e. the
    frame every coordinate refers to. ``source_mode`` is the Pillow mode before conversion to RGB. Episode steps also
    carry the episode's goal (``episode_task``) and the step's recorded action(s) as JSON (``recorded_action``).
    A screenshot the pipeline rendered from a web page (``source_uri`` under ``OUT/images/``) names the page
    (``page_uri``), the sha256 of the page's document (``page_sha256``) and how it was rendered (``render``); one of a
    desktop app (``--apps``) names the app (``app``, :class:`AppSettings`; ``page_uri`` is ``app:<name>``) and its
    display (``render``).
    """

    screenshot_id: str
    source_uri: str
    width: int
    height: int
    format: str
    source_mode: str
    exif_orientation: int
    byte_size: int
    ingest_time: _dt.datetime
    run_id: str
    episode_id: str | None = None
    step_index: int | None = None
    tile_plan: TilePlan | None = None
    episode_task: str | None = None
    recorded_action: str | None = None
    page_uri: str | None = None
    page_sha256: str | None = None
    render: RenderSettings | None = None
    app: AppSettings | None = None

    SCHEMA: ClassVar[pa.Schema] = pa.schema(
        [
            _f("screenshot_id", pa.string(), False),
            _f("source_uri", pa.string(), False),
            _f("width", pa.int32(), False),
            _f("height", pa.int32(), False),
            _f("format", pa.string(), False),
            _f("source_mode", pa.string(), False),
            _f("exif_orientation", pa.int8(), False),
            _f("byte_size", pa.int64(), False),
            _f("ingest_time", _TS, False),
            _f("run_id", pa.string(), False),
            _f("episode_id", pa.string()),
            _f("step_index", pa.int32()),
            _f("tile_plan", _TILE_STRUCT),
            _f("episode_task", pa.string()),
            _f("recorded_action", pa.string()),
            _f("page_uri", pa.string()),
            _f("page_sha256", pa.string()),
            _f("render", _RENDER_STRUCT),
            _f("app", _APP_STRUCT),
            _f("schema_version", pa.int16(), False),
        ],
        metadata={"table": "screenshots"},
    )

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Screenshot:
        row = dict(row)
        if row.get("tile_plan") is not None:
            row["tile_plan"] = TilePlan(**row["tile_plan"])
        if row.get("render") is not None:
            row["render"] = RenderSettings(**row["render"])
        if row.get("app") is not None:
            row["app"] = AppSettings.from_row(row["app"])
        return super(Screenshot, cls).from_row(row)


@dataclasses.dataclass(frozen=True, slots=True)
class GroundingLabel(_Record):
    """An instruction → element box + click point, in original-image pixels, with full provenance.

    ``coord_system`` names the producer's native system (``pixel``, ``pixel_resized``, ``norm_1000``, ``norm_1``,
    ``xywh_pixel``, ``ls_percent``); ``native_box`` / ``native_point`` keep the producer's raw numbers and
    ``ref_width``/``ref_height`` the frame they refer to (the resized image for ``pixel_resized``).
    """

    label_id: str
    screenshot_id: str
    image_width: int
    image_height: int
    instruction: str
    element_text: str | None
    role: str | None
    x0: float
    y0: float
    x1: float
    y1: float
    click_x: float
    click_y: float
    coord_system: str
    native_box: list[float] | None
    native_point: list[float] | None
    ref_width: int
    ref_height: int
    confidence: float
    annotator: str
    annotator_version: str
    recipe: str
    recipe_version: str
    config_hash: str
    run_id: str

    SCHEMA: ClassVar[pa.Schema] = pa.schema(
        [
            _f("label_id", pa.string(), False),
            _f("screenshot_id", pa.string(), False),
            _f("image_width", pa.int32(), False),
            _f("image_height", pa.int32(), False),
            _f("instruction", pa.string(), False),
            _f("element_text", pa.string()),
            _f("role", pa.string()),
            _f("x0", pa.float64(), False),
            _f("y0", pa.float64(), False),
            _f("x1", pa.float64(), False),
            _f("y1", pa.float64(), False),
            _f("click_x", pa.float64(), False),
            _f("click_y", pa.float64(), False),
            _f("coord_system", pa.string(), False),
            _f("native_box", pa.list_(pa.float64())),
            _f("native_point", pa.list_(pa.float64())),
            _f("ref_width", pa.int32(), False),
            _f("ref_height", pa.int32(), False),
            _f("confidence", pa.float32(), False),
            _f("annotator", pa.string(), False),
            _f("annotator_version", pa.string(), False),
            _f("recipe", pa.string(), False),
            _f("recipe_version", pa.string(), False),
            _f("config_hash", pa.string(), False),
            _f("run_id", pa.string(), False),
            _f("schema_version", pa.int16(), False),
        ],
        metadata={"table": "grounding"},
    )

    @staticmethod
    def make_id(screenshot_id: str, annotator: str, recipe_version: str, instruction: str, occurrence: int = 0) -> str:
        """``label_id`` = hash(screenshot, annotator, recipe version, instruction[, n-th same instruction])."""
        return keys.stable_id(screenshot_id, annotator, recipe_version, instruction, occurrence)


@dataclasses.dataclass(frozen=True, slots=True)
class ActionStep(_Record):
    """One step of an action trace: ``action_type`` + JSON ``action_args`` (coordinates in original pixels)."""

    episode_id: str
    step: int
    label_id: str
    screenshot_id: str | None
    action_type: str
    action_args: str
    thought: str | None
    source: str
    annotator: str
    annotator_version: str
    recipe_version: str
    run_id: str

    SCHEMA: ClassVar[pa.Schema] = pa.schema(
        [
            _f("episode_id", pa.string(), False),
            _f("step", pa.int32(), False),
            _f("label_id", pa.string(), False),
            _f("screenshot_id", pa.string()),
            _f("action_type", pa.string(), False),
            _f("action_args", pa.string(), False),
            _f("thought", pa.string()),
            _f("source", pa.string(), False),
            _f("annotator", pa.string(), False),
            _f("annotator_version", pa.string(), False),
            _f("recipe_version", pa.string(), False),
            _f("run_id", pa.string(), False),
            _f("schema_version", pa.int16(), False),
        ],
        metadata={"table": "actions"},
    )

    KEY: ClassVar[tuple[str, ...]] = ("episode_id", "step", "label_id")


@dataclasses.dataclass(frozen=True, slots=True)
class DeadLetter(_Record):
    """A rejected input: which input, which stage, a stable ``reason`` code, the error text, where the payload is.

    ``payload_ref`` points at the input (its URI) or, for model output, holds the raw text that failed.
    """

    input_id: str
    stage: str
    reason: str
    error: str
    payload_ref: str
    run_id: str
    time: _dt.datetime

    SCHEMA: ClassVar[pa.Schema] = pa.schema(
        [
            _f("input_id", pa.string(), False),
            _f("stage", pa.string(), False),
            _f("reason", pa.string(), False),
            _f("error", pa.string(), False),
            _f("payload_ref", pa.string(), False),
            _f("run_id", pa.string(), False),
            _f("time", _TS, False),
            _f("schema_version", pa.int16(), False),
        ],
        metadata={"table": "_dead_letter"},
    )

    def to_json(self) -> str:
        """The dead letter as one JSON object on one line (keys sorted, ``time`` in ISO 8601): how dead letters are
        written outside the Parquet tables (``convert``'s ``_dead_letter.jsonl``, ``export``'s report)."""
        return json.dumps(self.to_json_row(), ensure_ascii=False, sort_keys=True)

    def to_json_row(self) -> dict[str, Any]:
        """:meth:`to_row` with ``time`` as an ISO 8601 string: the object :meth:`to_json` writes."""
        row = self.to_row()
        row["time"] = self.time.isoformat()
        return row


@dataclasses.dataclass(frozen=True, slots=True)
class ReviewedLabel(_Record):
    """A reviewer's verdict on one grounding label (``label_id``), with corrections in original-image pixels.

    ``verdict`` is ``accept`` (label right as is), ``fix`` (corrected box / point / instruction given) or ``reject``.
    Corrections are None where the reviewer left the prediction unchanged.
    """

    label_id: str
    screenshot_id: str
    verdict: str
    instruction: str | None
    x0: float | None
    y0: float | None
    x1: float | None
    y1: float | None
    click_x: float | None
    click_y: float | None
    reviewer: str
    lead_time_s: float | None
    task_id: int
    annotation_id: int
    reviewed_at: _dt.datetime
    run_id: str

    SCHEMA: ClassVar[pa.Schema] = pa.schema(
        [
            _f("label_id", pa.string(), False),
            _f("screenshot_id", pa.string(), False),
            _f("verdict", pa.string(), False),
            _f("instruction", pa.string()),
            _f("x0", pa.float64()),
            _f("y0", pa.float64()),
            _f("x1", pa.float64()),
            _f("y1", pa.float64()),
            _f("click_x", pa.float64()),
            _f("click_y", pa.float64()),
            _f("reviewer", pa.string(), False),
            _f("lead_time_s", pa.float64()),
            _f("task_id", pa.int64(), False),
            _f("annotation_id", pa.int64(), False),
            _f("reviewed_at", _TS, False),
            _f("run_id", pa.string(), False),
            _f("schema_version", pa.int16(), False),
        ],
        metadata={"table": "reviewed"},
    )


@dataclasses.dataclass(frozen=True, slots=True)
class Done(_Record):
    """One unit of finished work: the screenshot occurrence (``screenshot_id``, ``episode_id``, ``step_index``)
    was carried through every stage under ``config_hash`` in run ``run_id``.

    ``outcome`` is ``labelled`` (it reached the end of the run; its labels, if any, were committed with it) or
    ``rejected`` (a permanent dead letter, ``reason`` says which). Incremental runs skip every occurrence that has a
    row with their own ``config_hash``; rows are committed in the same transaction as the outputs they stand for.
    """

    screenshot_id: str
    episode_id: str | None
    step_index: int | None
    config_hash: str
    outcome: str
    reason: str | None
    run_id: str
    done_time: _dt.datetime

    SCHEMA: ClassVar[pa.Schema] = pa.schema(
        [
            _f("screenshot_id", pa.string(), False),
            _f("episode_id", pa.string()),
            _f("step_index", pa.int32()),
            _f("config_hash", pa.string(), False),
            _f("outcome", pa.string(), False),
            _f("reason", pa.string()),
            _f("run_id", pa.string(), False),
            _f("done_time", _TS, False),
            _f("schema_version", pa.int16(), False),
        ],
        metadata={"table": "_done"},
    )

    KEY: ClassVar[tuple[str, ...]] = ("screenshot_id", "episode_id", "step_index", "config_hash")

    @property
    def item_key(self) -> str:
        return keys.item_key(self.screenshot_id, self.episode_id, self.step_index)


def first_occurrence(shots: Iterable[Any]):
    """The occurrence that stands for an image seen several times (the same bytes in several files or steps).

    The smallest ``(source_uri, episode_id, step_index)`` wins (a missing episode sorts first, a missing step or step
    0 as -1): the image is labelled on it, and converters read its file. Takes :class:`Screenshot` records or
    ``screenshots`` table rows (mappings) alike.

    Raises:
        ValueError: ``shots`` is empty.
    """

    def key(s):
        get = s.get if isinstance(s, Mapping) else lambda name: getattr(s, name)
        return (get("source_uri"), get("episode_id") or "", get("step_index") or -1)

    return min(shots, key=key)


class Rejected(ValueError):
    """An input a stage refuses; ``reason`` is the stable dead-letter code, ``message`` the human explanation."""

    def __init__(self, reason: str, message: str):
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message


def utcnow() -> _dt.datetime:
    """Timezone-aware UTC now, microsecond precision (what the timestamp columns store)."""
    return _dt.datetime.now(_dt.UTC)
