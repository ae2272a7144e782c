"""The checks a training export runs before it writes a row (:mod:`screenmill.stages.export.training`).

Each failing check holds the row back as a dead letter of stage ``export/training`` with its reason code
(:mod:`screenmill.schemas.reasons`), counted in the export report:

``box_outside_image``    the box leaves its image by more than ``slack`` pixels, or has no area (an action's point
                         outside its image, likewise);
``one_colour_box``       the box covers a region of one colour (every channel's max - min within ``tolerance``):
                         nothing there to point at;
``rounding_leaves_box``  the target's rounding, converted back with the card's formula, moves the point out of the box
                         (point targets, and the centre of the box for box targets), or the box's IoU with the
                         original falls under ``min_iou``;
``split_leak``           the image's group (perceptual hash within ``phash_bits`` bits, or one episode) already has
                         rows in both splits from earlier exports;
plus the image checks of the Hub export (``missing_image``, ``changed_since_run``) and ``bad_image`` (the bytes do not
decode).

The split follows the image group (:class:`ImageGroups`): screenshots whose perceptual hashes
(:func:`screenmill.schemas.phash.phash`) are within ``phash_bits`` bits, and the screenshots of one episode, are one
group; a group takes the split its earlier rows took, else the salted hash of its smallest member id. So the same
image never sits on both sides of the split.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from screenmill.annotators.formats import Unwritable, decode_frame, encode_frame, image_name, needs_reencoding
from screenmill.annotators.targets import Target
from screenmill.schemas import phash as ph
from screenmill.schemas.coords import box_iou, point_in_box
from screenmill.stages.export.hub import read_image


@dataclasses.dataclass(frozen=True, slots=True)
class ImageFacts:
    """What the export keeps of every screenshot it read: file name, frame size and perceptual hash."""

    name: str
    size: tuple[int, int]
    phash: int


class Images:
    """Reads, verifies and decodes the screenshots rows need; remembers why one cannot be used.

    Memory stays bounded: the facts of every screenshot are kept, the bytes and decoded frames of the last ``keep``
    only (read again, verified again, when needed again).
    """

    def __init__(self, shots: Mapping[str, list[dict[str, Any]]], keep: int = 16):
        self._shots, self._keep = shots, keep
        self._facts: dict[str, ImageFacts] = {}
        self._recent: OrderedDict[str, tuple[bytes, Any]] = OrderedDict()
        self.lost: dict[str, tuple[str, str]] = {}

    def get(self, sid: str) -> ImageFacts | None:
        """The screenshot's facts, or None when it cannot be used (:attr:`lost` says why)."""
        if sid not in self._facts and sid not in self.lost:
            self._load(sid)
        return self._facts.get(sid)

    def frame(self, sid: str):
        """The decoded frame the coordinates refer to (the screenshot must not be lost)."""
        return self._load(sid)[1]

    def data(self, sid: str) -> bytes:
        """The bytes a row holds: the file as it is, or the frame re-encoded when the file is not upright RGB."""
        return self._load(sid)[0]

    def _load(self, sid: str) -> tuple[bytes, Any] | None:
        if sid in self._recent:
            self._recent.move_to_end(sid)
            return self._recent[sid]
        rows = self._shots.get(sid)
        if not rows:
            self.lost[sid] = ("missing_screenshot", f"screenshot {sid} is in no screenshots table")
            return None
        shot = rows[0]
        data, letter = read_image(sid, shot["byte_size"], (r["source_uri"] for r in rows))
        if letter is not None:
            self.lost[sid] = (letter.reason, letter.error)
            return None
        try:
            frame = decode_frame(data, (shot["width"], shot["height"]))
        except Unwritable as e:
            self.lost[sid] = ("bad_image", e.message)
            return None
        data = encode_frame(frame, shot["format"]) if needs_reencoding(shot) else data
        if sid not in self._facts:
            self._facts[sid] = ImageFacts(image_name(shot), frame.size, ph.phash(frame))
        self._recent[sid] = (data, frame)
        while len(self._recent) > self._keep:
            self._recent.popitem(last=False)
        return data, frame


def box_outside(box: Sequence[float], width: int, height: int, slack: float) -> str | None:
    """Why a pixel box fails ``box_outside_image`` (None when it is inside its image, within ``slack`` pixels)."""
    x0, y0, x1, y1 = box
    if not (x1 > x0 and y1 > y0):
        return f"box {list(box)} has no area"
    if x0 < -slack or y0 < -slack or x1 > width + slack or y1 > height + slack:
        return f"box {list(box)} leaves the {width}x{height} image"
    return None


def point_outside(point: Sequence[float], width: int, height: int, slack: float) -> str | None:
    """Why an action's pixel point fails ``box_outside_image`` (None when it lies in its image)."""
    x, y = point
    if -slack <= x <= width + slack and -slack <= y <= height + slack:
        return None
    return f"point {list(point)} leaves the {width}x{height} image"


def one_colour(frame: Any, box: Sequence[float], tolerance: int) -> bool:
    """Whether the pixels of ``box`` (clamped into the frame, one pixel at least) are one colour, within
    ``tolerance`` per channel."""
    x0 = min(max(int(box[0]), 0), frame.width - 1)
    y0 = min(max(int(box[1]), 0), frame.height - 1)
    x1 = max(min(int(-(-box[2] // 1)), frame.width), x0 + 1)
    y1 = max(min(int(-(-box[3] // 1)), frame.height), y0 + 1)
    bands = frame.crop((x0, y0, x1, y1)).getextrema()
    if isinstance(bands[0], int):  # one band
        bands = (bands,)
    return all(hi - lo <= tolerance for lo, hi in bands)


def rounding_error(
    target: Target, box: Sequence[float], point: Sequence[float], width: int, height: int, min_iou: float
) -> tuple[tuple[float, ...], str | None]:
    """The target's encoded values for a label and why they fail ``rounding_leaves_box`` (None when they pass).

    Args:
        target: the model convention.
        box, point: the label's box and click point, original pixels.
        width, height: the image size.
        min_iou: the least IoU a box target's box may keep.

    Returns:
        ``(values, error)``: 4 values for a box target, 2 for a point target.
    """
    if target.geometry == "box":
        values = target.encode_box(box, width, height)
        back = target.decode_box(values, width, height)
        iou = box_iou(back, box)
        centre = ((back[0] + back[2]) / 2, (back[1] + back[3]) / 2)
        if iou < min_iou:
            return values, f"{target.name} box {list(values)} is {list(back)} back: IoU {iou:.3f} < {min_iou}"
        if not point_in_box(centre, box):
            return values, f"{target.name} box {list(values)} has its centre {list(centre)} outside {list(box)}"
        return values, None
    values = target.encode_point(point, width, height)
    back = target.decode_point(values, width, height)
    if not point_in_box(back, box):
        return values, f"{target.name} point {list(values)} is {list(back)} back, outside {list(box)}"
    return values, None


class ImageGroups:
    """Union-find over screenshot ids: perceptual-hash twins (within ``bits``) and episode mates share a group."""

    def __init__(self, bits: int):
        self._bits = bits
        self._parent: dict[str, str] = {}
        self._ids: list[str] = []
        self._hashes: list[int] = []

    def _find(self, a: str) -> str:
        self._parent.setdefault(a, a)
        while self._parent[a] != a:
            self._parent[a] = self._parent[self._parent[a]]
            a = self._parent[a]
        return a

    def union(self, a: str, b: str) -> None:
        ra, rb = self._find(a), self._find(b)
        if ra != rb:
            self._parent[max(ra, rb)] = min(ra, rb)

    def add(self, sid: str, phash: int) -> None:
        """Add a screenshot with its 63-bit perceptual hash; join it to every earlier one within ``bits`` bits."""
        self._find(sid)
        if self._hashes:
            known = np.array(self._hashes, dtype=np.uint64)
            near = np.flatnonzero(np.bitwise_count(known ^ np.uint64(phash)) <= self._bits)
            for i in near:
                self.union(sid, self._ids[int(i)])
        self._ids.append(sid)
        self._hashes.append(phash)

    def link(self, members: Iterable[str]) -> None:
        """Put ``members`` (e.g. one episode's screenshots) into one group."""
        members = list(members)
        for m in members[1:]:
            self.union(members[0], m)

    def root(self, sid: str) -> str:
        """The group's name: its smallest member id."""
        return self._find(sid)

    def splits(self, previous: Mapping[str, str], split_of) -> tuple[dict[str, str], set[str]]:
        """The split of every screenshot, and the groups that leak.

        Args:
            previous: ``{screenshot_id: split}`` of the rows earlier exports wrote.
            split_of: ``unit -> split`` (the salted hash) for a group no earlier row decided.

        Returns:
            ``({screenshot_id: split}, {root of a group whose earlier rows are in both splits})``.
        """
        seen: dict[str, set[str]] = {}
        for sid, split in previous.items():
            seen.setdefault(self.root(sid), set()).add(split)
        out, leaks = {}, set()
        for sid in self._parent:
            root = self.root(sid)
            before = seen.get(root, set())
            if len(before) > 1:
                leaks.add(root)
            out[sid] = min(before) if before else split_of(root)
        return out, leaks
