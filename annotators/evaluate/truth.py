"""Ground truth for the evaluation: ScreenSpot-style JSONL files, the truth a run's exact labels give (the DOM labels
of rendered pages, the accessibility labels of desktop apps), the dev / test split of rendered pages. Pure functions.

Ground truth is JSON Lines, one element per line::

    {"img_filename": "login.png", "instruction": "Forgot password?", "bbox": [x, y, w, h], ...}

``bbox`` is ``[x, y, w, h]`` in screenshot pixels (ScreenSpot's convention) unless ``load_truth(...,
bbox_format="xyxy")`` says otherwise; a record may instead carry ``bbox_xyxy: [x0, y0, x1, y1]``.

A record's ``data_type`` tells the matching (:mod:`screenmill.annotators.evaluate.matching`) what it is: ``text``, an
element of visible text (in recall); :data:`LINE` (from :func:`truth_from_labels`: the DOM's role ``line``), visible
text that is no element (a line of a long paragraph or code block, the words around an inline link), scored for
precision only; :data:`ICON`, an element with no visible text (an image link, an icon button, a check box whose text
is its label's) and :data:`CUT`, text the screenshot's top or bottom edge cuts through (a strip of its glyphs
painted): both out of OCR's reach.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import urllib.parse
from collections.abc import Iterable, Mapping
from pathlib import Path

from screenmill.annotators.wording import (
    A11Y_OF,
    DOM_FIELD,
    DOM_NAME,
    DOM_NAME_POSITION,
    DOM_POSITION,
    DOM_RECIPES,
    DOM_ROLE,
    DOM_TEXT,
    is_placeholder_label,
)

#: ``data_type`` of a truth record that is a line of painted text, not an element: scored for precision only.
LINE = "line"
#: ``data_type`` of a truth element with no visible text (ScreenSpot's "icon"; :func:`truth_from_labels`' elements
#: without a ``dom-text`` / ``dom-field`` label): out of OCR's reach.
ICON = "icon"
#: ``data_type`` of a text element the screenshot's top or bottom edge cuts through (:func:`truth_from_labels`): only a
#: strip of its glyphs is painted, out of OCR's reach like an icon.
CUT = "cut"
#: ``element`` of a truth record that is a window's title bar (:func:`window_title_truth`).
WINDOW_TITLE = "window title"
#: A text element whose box touches the screenshot's top or bottom edge and is lower than this share of the
#: screenshot's median text height (elements and lines) is :data:`CUT`: the DOM box is clipped to the viewport, so a
#: line scrolled half out of view keeps a box a few pixels high.
CUT_HEIGHT = 0.75


@dataclasses.dataclass(frozen=True, slots=True)
class TruthRecord:
    """One ground-truth element.

    Attributes:
        image: the screenshot's file name (``img_filename``).
        text: the visible text (``instruction``).
        box: ``(x0, y0, x1, y1)`` in screenshot pixels.
        element: the DOM tag / role the record came from, if given.
        data_type: ScreenSpot ``data_type`` ("text", "icon"), if given; :data:`LINE` for a line of painted text that
            is no element (see :func:`screenmill.annotators.evaluate.matching.evaluate`).
        sha256: hex SHA-256 of the image file, when it was next to the JSONL file at load time.
    """

    image: str
    text: str
    box: tuple[float, float, float, float]
    element: str = ""
    data_type: str = "text"
    sha256: str | None = None


def load_truth(path: str | os.PathLike, bbox_format: str = "xywh", hash_images: bool = True) -> list[TruthRecord]:
    """Read a ScreenSpot-style JSONL ground-truth file.

    Args:
        path: the ``.jsonl`` file; blank lines are skipped.
        bbox_format: how to read a ``bbox`` key: ``"xywh"`` (ScreenSpot, default) or ``"xyxy"``. A ``bbox_xyxy``
            key is always read as ``[x0, y0, x1, y1]``.
        hash_images: when the image named by ``img_filename`` exists next to the file, record its SHA-256 so
            predictions keyed by content hash match too.

    Returns:
        The records in file order.

    Raises:
        ValueError: an unknown ``bbox_format``, or a line that is not a JSON object with a non-empty string
            ``img_filename``, a non-empty string ``instruction`` and a box of 4 finite numbers with non-negative
            size; the message names the file and line number.
        OSError: the file cannot be read.
    """
    if bbox_format not in ("xywh", "xyxy"):
        raise ValueError(f"bbox_format must be 'xywh' or 'xyxy', got {bbox_format!r}")
    path = Path(path)
    hashes: dict[str, str | None] = {}
    out: list[TruthRecord] = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{where}: not valid JSON ({e.msg})") from None
            if not isinstance(rec, dict):
                raise ValueError(f"{where}: expected a JSON object, got {type(rec).__name__}")
            image, text = rec.get("img_filename"), rec.get("instruction")
            if not isinstance(image, str) or not image:
                raise ValueError(f"{where}: 'img_filename' must be a non-empty string")
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"{where}: 'instruction' must be a non-empty string")
            if "bbox_xyxy" in rec:
                box, fmt = rec["bbox_xyxy"], "xyxy"
            elif "bbox" in rec:
                box, fmt = rec["bbox"], bbox_format
            else:
                raise ValueError(f"{where}: needs 'bbox' ([x, y, w, h]) or 'bbox_xyxy' ([x0, y0, x1, y1])")
            if (
                not isinstance(box, list | tuple)
                or len(box) != 4
                or not all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in box)
            ):
                raise ValueError(f"{where}: box must be 4 finite numbers, got {box!r}")
            x0, y0, a, b = (float(v) for v in box)
            x1, y1 = (x0 + a, y0 + b) if fmt == "xywh" else (a, b)
            if x1 < x0 or y1 < y0:
                raise ValueError(f"{where}: box {box!r} ({fmt}) has a negative width or height")
            if hash_images and image not in hashes:
                img_path = path.parent / image
                hashes[image] = hashlib.sha256(img_path.read_bytes()).hexdigest() if img_path.is_file() else None
            out.append(
                TruthRecord(
                    image=image,
                    text=text,
                    box=(x0, y0, x1, y1),
                    element=str(rec.get("element", "")),
                    data_type=str(rec.get("data_type", "text")),
                    sha256=hashes.get(image),
                )
            )
    return out


#: The DOM recipes in the order :func:`truth_from_labels` takes an element's truth text from them.
DOM_TEXT_RECIPES = (DOM_TEXT, DOM_FIELD, DOM_NAME, DOM_ROLE, DOM_POSITION, DOM_NAME_POSITION)
#: The DOM recipes that name an element by an accessible name it does not show.
DOM_NAME_RECIPES = frozenset({DOM_NAME, DOM_NAME_POSITION})
#: DOM roles that show no text of their own: a check box / radio button / switch is named by its label (an element of
#: its own, which keeps the visible text), an image by its alt text.
NO_TEXT_ROLES = frozenset({"checkbox", "radio", "switch", "image", "img"})


@dataclasses.dataclass(frozen=True, slots=True)
class LabelTruth:
    """How one exact-label producer's grounding rows are read as ground truth.

    Attributes:
        annotator: the producer's ``annotator`` column (``dom``, ``a11y``).
        recipes: each of its recipes → the DOM recipe it stands for (its labels are worded by the DOM's rules).
        names_shown: whether a name-only label (``*-name``) is text the element shows. The DOM writes ``dom-name``
            only for a name that differs from the visible text (an image link): not shown. An accessible's name is
            what a toolkit has for its label (a button's "7", a menu's "File"), with no text apart from it: shown
            (an icon-only button named by its tooltip counts as text too: the a11y tree does not tell them apart).
        edge_cut: whether a low text box at the screenshot's top or bottom edge is text cut by it (:data:`CUT`).
            The DOM: a box is clipped to the viewport, so a line scrolled half out of view keeps a strip. An app's
            window sits at the screen's origin and a kept accessible's centre is on the screen: a box at the top
            edge is a menu bar's item, whole.
        no_truth: what ``screenmill eval`` says when a tree has none of these labels.
        window_titles: whether the title bars a window manager drew (the screenshots' ``app.window_titles``) are
            truth elements too (:func:`window_title_truth`): painted text in no accessible tree.
    """

    annotator: str
    recipes: Mapping[str, str]
    names_shown: bool
    edge_cut: bool
    no_truth: str
    window_titles: bool = False


#: The exact-label producers whose labels are truth (``screenmill eval --truth-from-dom`` / ``--truth-from-a11y``).
LABEL_TRUTH = {
    "dom": LabelTruth(
        "dom",
        {r: r for r in DOM_RECIPES},
        names_shown=False,
        edge_cut=True,
        no_truth="no DOM labels (render pages with `screenmill run --pages`)",
    ),
    "a11y": LabelTruth(
        "a11y",
        {v: k for k, v in A11Y_OF.items()},
        names_shown=True,
        edge_cut=False,
        no_truth="no a11y labels (run desktop apps with `screenmill run --apps`)",
        window_titles=True,
    ),
}


def truth_from_labels(rows: Iterable[dict], annotator: str = "dom") -> list[TruthRecord]:
    """Ground truth from a run's exact labels of one producer (:data:`LABEL_TRUTH`: ``dom``, the rendered pages'
    DOM labels, or ``a11y``, the desktop apps' accessibility labels): one record per labelled element.

    An element has a row per referring expression; its truth text is the visible text (``dom-text``) where it has
    one, else its field's placeholder (painted inside the field, where its label is painted beside it), else its
    field label, else its accessible name (the recipes named as the DOM's: ``a11y-text`` is read as ``dom-text``).
    ``element`` is the role. ``data_type`` is :data:`LINE` for the DOM's lines of painted text that is no element
    (role ``line``: scored for precision only) and :data:`ICON` for an element that shows no text of its own (what
    OCR cannot read), told from its recipes:

    * an accessible name that differs from its visible text (``dom-name``: an image link, an icon button; or
      ``dom-name-position``: such a name repeats, two "Up" arrows) and no ``dom-text`` / ``dom-field`` label
      (the DOM only: an accessible's name is its shown label, :attr:`LabelTruth.names_shown`);
    * a role whose text is another element's (:data:`NO_TEXT_ROLES`: a check box or radio button is named by its
      label, which is an element of its own) or an image, with no ``dom-text`` label.

    Every other element is ``text``, also one with only a role or positional instruction (its visible text repeats
    on the screenshot, so ``dom-text`` went to none of them: a repeated heading, a table cell "Paid"). DOM labels
    before recipe version 4 named a repeated icon's position ``dom-position`` too, so there it counts as text.
    A text element whose box touches the screenshot's top or bottom edge and is lower than :data:`CUT_HEIGHT` of the
    screenshot's median text height is :data:`CUT` (a line scrolled half out of view: its DOM box is the strip left
    in view; DOM labels only, :attr:`LabelTruth.edge_cut`). Records are keyed by the screenshot's content id
    (``image`` and ``sha256``), so the other annotators' labels of the same screenshots meet them.

    Args:
        rows: ``grounding`` rows (other annotators' rows are skipped).
        annotator: a key of :data:`LABEL_TRUTH`.

    Returns:
        The records, one per (screenshot, element box), in row order of their first row.

    Raises:
        KeyError: ``annotator`` is not a key of :data:`LABEL_TRUTH`.
    """
    source = LABEL_TRUTH[annotator]
    elements: dict[tuple, dict[str, dict]] = {}
    image_height: dict[str, float] = {}
    for r in rows:
        recipe = source.recipes.get(r["recipe"]) if r["annotator"] == annotator else None
        if recipe is None:
            continue
        image_height[r["screenshot_id"]] = float(r.get("image_height") or 0)
        key = (r["screenshot_id"], *(round(float(r[k]), 1) for k in ("x0", "y0", "x1", "y1")))
        by_recipe = elements.setdefault(key, {})
        # a field's placeholder is painted inside it, its label beside it: the placeholder row wins, whatever the
        # row order (which follows the label ids, so changes with the config hash)
        if recipe not in by_recipe or (recipe == DOM_FIELD and is_placeholder_label(r["instruction"])):
            by_recipe[recipe] = r
    out = []
    for (sid, x0, y0, x1, y1), by_recipe in elements.items():
        first = next(by_recipe[k] for k in DOM_TEXT_RECIPES if k in by_recipe)
        text = first.get("element_text") or first["instruction"]
        shows_text = DOM_TEXT in by_recipe or DOM_FIELD in by_recipe
        role = first.get("role") or ""
        named = not source.names_shown and not DOM_NAME_RECIPES.isdisjoint(by_recipe)
        kind = "text" if shows_text or (not named and role not in NO_TEXT_ROLES) else ICON
        if role == LINE:
            kind = LINE
        out.append(
            TruthRecord(sid, text, (x0, y0, x1, y1), element=first.get("role") or "", data_type=kind, sha256=sid)
        )
    return _mark_cut(out, image_height) if source.edge_cut else out


def window_title_truth(screenshots: Iterable[dict], ids: Iterable[str] | None = None) -> list[TruthRecord]:
    """Ground truth from the title bars a window manager drew on desktop app screens: one text record per
    (screenshot, bar) of the ``screenshots`` rows' ``app.window_titles``
    (:class:`screenmill.schemas.records.WindowTitle`), its text the window's title, its box the bar's, ``element``
    :data:`WINDOW_TITLE`. An OCR label whose point lies in the bar and whose text reads the title finds it.

    Args:
        screenshots: ``screenshots`` rows (rows without an app, or written before titles were recorded, give none).
        ids: only these screenshot ids (None: every one).

    Returns:
        The records, in row order, each (screenshot, title, box) once (an episode's frames can repeat a screenshot).
    """
    keep = None if ids is None else set(ids)
    seen: set[tuple] = set()
    out = []
    for shot in screenshots:
        sid = shot["screenshot_id"]
        if keep is not None and sid not in keep:
            continue
        for t in (shot.get("app") or {}).get("window_titles") or ():
            box = (float(t["x0"]), float(t["y0"]), float(t["x1"]), float(t["y1"]))
            if (sid, t["title"], box) not in seen:
                seen.add((sid, t["title"], box))
                out.append(TruthRecord(sid, t["title"], box, element=WINDOW_TITLE, sha256=sid))
    return out


def _mark_cut(records: list[TruthRecord], image_height: dict[str, float]) -> list[TruthRecord]:
    """The records with each text element cut by its screenshot's top or bottom edge made :data:`CUT`."""
    heights: dict[str, list[float]] = {}
    for t in records:
        if t.data_type in ("text", LINE):
            heights.setdefault(t.image, []).append(t.box[3] - t.box[1])
    median = {k: sorted(v)[len(v) // 2] for k, v in heights.items()}
    out = []
    for t in records:
        h, bottom = t.box[3] - t.box[1], image_height.get(t.image, 0.0)
        at_edge = t.box[1] <= 0.5 or (bottom > 0 and t.box[3] >= bottom - 0.5)
        if t.data_type == "text" and at_edge and h < CUT_HEIGHT * median[t.image]:
            t = dataclasses.replace(t, data_type=CUT)
        out.append(t)
    return out


def splits_from_manifest(manifest: str | os.PathLike, screenshots: Iterable[dict]) -> dict[str, str]:
    """``screenshot_id`` → split (``dev`` / ``test``) of the rendered screenshots whose page the manifest lists.

    The manifest is the JSONL that ``infra/truthset/collect.py`` writes (``path`` relative to the manifest's folder,
    ``split``); a screenshot's page is its ``page_uri`` (a ``file://`` URL of the rendered page). Pages are matched by
    resolved path, or else by the manifest path being the tail of the URL's path (the folder was moved).

    Args:
        manifest: the ``pages.jsonl`` file.
        screenshots: ``screenshots`` rows (``screenshot_id``, ``page_uri``); rows without a page are skipped.

    Returns:
        The split of every screenshot of a listed page.

    Raises:
        OSError: the manifest cannot be read. ValueError / KeyError: a line is not a record with path and split.
    """
    base = Path(manifest).resolve().parent
    by_path: dict[str, str] = {}
    with open(manifest, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                rec = json.loads(line)
                by_path[rec["path"].lstrip("/")] = rec["split"]
    resolved = {str((base / p).resolve()): split for p, split in by_path.items()}
    out = {}
    for s in screenshots:
        uri = s.get("page_uri")
        if not uri or not uri.startswith("file://"):
            continue
        path = urllib.parse.unquote(urllib.parse.urlsplit(uri).path)
        split = resolved.get(str(Path(path).resolve()))
        if split is None:
            split = next((v for p, v in by_path.items() if path.endswith("/" + p)), None)
        if split is not None:
            out[s["screenshot_id"]] = split
    return out
