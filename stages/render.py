"""``RenderPages``: web pages → rendered screenshots (``OUT/images/<sha256>.png``) + exact DOM labels + dead letters.

Pages come from ``pages`` (a folder, read recursively, or a glob: its ``.html`` / ``.htm`` files are pages, every other
file there is an asset they may load) and ``urls`` (a file of ``file://`` / ``http(s)://`` URLs, one a line, ``#``
comments). Each page is rendered under every setting (viewport x colour scheme) into up to ``screens`` screenshots
down the page, in one headless Chromium per worker process (:class:`screenmill.annotators.dom.browser.BrowserHost`,
held by :func:`screenmill.annotators.process.per_process`), fenced: requests only under the page's root folder and to
allowed origins, in a network namespace of its own (:mod:`screenmill.annotators.dom.jail`; a worker whose browser
lacks the namespace or Chromium's sandbox counts ``browsers_without_namespace`` / ``browsers_without_sandbox``).

Each screenshot is written once, content-addressed, under ``OUT/images/`` (temp name → rename), checked like any input
(:func:`screenmill.schemas.images.inspect_image`) and goes on as a :class:`Screenshot` (``page_uri``, ``page_sha256``,
``render``) through the ordinary spine (ingest's de-duplication, tiling, any annotator, the tables); its DOM labels
(:func:`screenmill.annotators.dom.labels.dom_labels`) go on the ``labels`` output as ``(origin, labels)`` pairs, one a
screenshot (none for a screenshot without labels), to be kept for the screenshots ingest keeps
(:func:`labels_of_kept`).

Incremental: a page's key is its URI, the sha256 of its document and the setting; under the run's ``config_hash``
(which sees the settings and the DOM recipe versions) a page whose key is done is not rendered again, and a screen
done by an earlier run is not emitted again. ``pages`` output: a :class:`RenderedJob` per rendered page setting, for
its ``_done`` row once none of its screenshots is held back.

Exploration (``explore`` > 0): instead of screens down the page, each page setting is explored into an episode
(:func:`screenmill.annotators.dom.explore.explore_page`: up to ``explore`` actions chosen with ``explore_seed``). Every
frame is a :class:`Screenshot` with ``episode_id`` (:func:`episode_key`), ``step_index`` (frame 0 the page as loaded,
frame *i* after action *i*) and, on every frame but the last, the action taken on it in ``recorded_action`` (the
generic format of :mod:`screenmill.annotators.recorded`, points in screenshot pixels, with ``type``, ``content``,
``role``, ``name``, ``noop``, ``blocked``); every frame gets its DOM labels; every action an :class:`ActionStep` on the
``actions`` output (``source='recorded'``, ``annotator='dom'``, ``action_args`` with the template ``instruction``). The
episode is the unit of done: its key (page URI, document sha256, setting, seed, steps, policy version) is skipped when
done, and an episode that failed part-way is explored again whole.

Reasons: ``render_timeout``, ``render_failed``, ``explore_timeout`` (all retried by the next run), ``page_too_large``,
``blank_page``, ``page_redirects`` (``_done`` as rejected), ``bad_url``, ``unreadable`` (the page file), any
:mod:`screenmill.schemas.images` reason.
"""

from __future__ import annotations

import collections
import dataclasses
import glob
import hashlib
import json
import os
import urllib.parse
import urllib.request
from collections.abc import Iterator

import apache_beam as beam
from screenmill.annotators.dom import explore
from screenmill.annotators.dom.browser import BrowserConfig, BrowserHost
from screenmill.annotators.dom.labels import ALL_RECIPE_VERSIONS, RECIPE_VERSIONS, dom_labels
from screenmill.annotators.dom.page import RenderError, Screen, Viewport
from screenmill.annotators.process import per_process
from screenmill.annotators.wording import DOM_RECIPE_FAMILIES
from screenmill.schemas.images import ImageLimits, ImageRejected, inspect_image
from screenmill.schemas.keys import item_key, stable_id
from screenmill.schemas.records import ActionStep, Done, RenderSettings, Screenshot, utcnow
from screenmill.schemas.tables import image_path
from screenmill.stages.base import Failure, Stage, StageDoFn, StageOutputs
from screenmill.stages.done import rejected_done

STAGE = "render"
PAGE_EXTENSIONS = (".html", ".htm")
COLOR_SCHEMES = ("light", "dark")
LABELS = "labels"
PAGES = "pages"
DONE = "done"
ACTIONS = "actions"
PERMANENT = frozenset({"page_too_large", "blank_page", "page_redirects"})
MAX_PAGE_BYTES = 32 * 1024 * 1024


@dataclasses.dataclass(frozen=True)
class RenderConfig:
    """What to render, how, and where the screenshots go.

    Attributes:
        output: the run's output root (screenshots under ``OUT/images/``).
        run_id: the run's id.
        pages: a folder or glob of pages (None: none).
        urls: a file of URLs (None: none).
        viewports: render settings (``Viewport.parse`` specs made).
        color_schemes: ``light`` and / or ``dark``.
        screens: screenshots down each page (scrolling one viewport each).
        browser: the browser's limits and fence.
        limits: the image checks every screenshot passes.
        config_hash: the run's output-determining hash (for ``_done`` rows of pages rejected for good).
        explore: actions per episode (0: no exploration, screens are rendered).
        explore_seed: the exploration policy's seed.
        explore_step_timeout_s: the time limit of one exploration step.
        dom_recipes: the DOM recipe families to write (keys of ``DOM_RECIPE_FAMILIES``; ``text`` alone by default).
    """

    output: str
    run_id: str
    pages: str | None = None
    urls: str | None = None
    viewports: tuple[Viewport, ...] = (Viewport(1280, 800),)
    color_schemes: tuple[str, ...] = ("light",)
    screens: int = 1
    browser: BrowserConfig = BrowserConfig()
    limits: ImageLimits = ImageLimits()
    config_hash: str | None = None
    explore: int = 0
    explore_seed: int = 0
    explore_step_timeout_s: float = 10.0
    dom_recipes: tuple[str, ...] = ("text",)

    def __post_init__(self):
        if not (self.pages or self.urls):
            raise ValueError("RenderConfig needs pages or urls")
        if not self.viewports:
            raise ValueError("at least one viewport is needed")
        bad = [s for s in self.color_schemes if s not in COLOR_SCHEMES]
        if bad or not self.color_schemes:
            raise ValueError(f"color schemes must be among {', '.join(COLOR_SCHEMES)}, got {','.join(bad) or 'none'}")
        if not 1 <= self.screens <= 100:
            raise ValueError(f"screens must be 1..100, got {self.screens}")
        if self.urls and not os.path.isfile(self.urls):
            raise ValueError(f"--urls {self.urls}: no such file")
        if self.pages and not list_pages(self.pages):
            raise ValueError(f"--pages {self.pages}: no .html / .htm pages there")
        unknown = [f for f in self.dom_recipes if f not in DOM_RECIPE_FAMILIES]
        if unknown or not self.dom_recipes:
            known = ", ".join(DOM_RECIPE_FAMILIES)
            raise ValueError(f"--dom-recipes must be among {known}, got {','.join(unknown) or 'none'}")
        if self.explore:
            if self.screens != 1:
                raise ValueError("--explore explores from the first screen: it does not go with --screens > 1")
            self.explore_settings  # noqa: B018 - checks steps and the step timeout

    @property
    def recipes(self) -> frozenset[str]:
        """The DOM recipes to write (those of the families of ``dom_recipes``)."""
        return frozenset(r for f in self.dom_recipes for r in DOM_RECIPE_FAMILIES[f])

    @property
    def explore_settings(self) -> explore.ExploreSettings:
        return explore.ExploreSettings(self.explore, self.explore_seed, self.explore_step_timeout_s)

    def hash_view(self) -> dict:
        """What of this config determines the output (for ``config_hash``): settings and recipe versions."""
        b = self.browser
        return {
            "render": [v.spec for v in self.viewports],
            "color_schemes": list(self.color_schemes),
            "screens": self.screens,
            "allow_origins": sorted(b.allow_origins),
            "max_dom_nodes": b.max_dom_nodes,
            "max_text_chars": b.max_text_chars,
            "dom_recipes": dict(sorted(RECIPE_VERSIONS.items())),
            # only when asked for: the default's hash is the one it was before these recipes existed
            **(
                {"dom_recipe_mix": {r: ALL_RECIPE_VERSIONS[r] for r in sorted(self.recipes)}}
                if self.dom_recipes != ("text",)
                else {}
            ),
        }


def list_pages(pattern: str) -> list[tuple[str, str]]:
    """``(page path, root folder)`` of every page under a folder (recursive) or matching a glob, sorted."""
    if os.path.isdir(pattern):
        root = os.path.abspath(pattern)
        found = glob.glob(os.path.join(root, "**", "*"), recursive=True)
    else:
        magic = next((i for i, c in enumerate(pattern) if c in "*?["), len(pattern))
        root = os.path.abspath(os.path.dirname(pattern[:magic]) or ".")
        found = glob.glob(pattern, recursive=True)
    pages = (os.path.abspath(p) for p in found if p.lower().endswith(PAGE_EXTENSIONS) and os.path.isfile(p))
    return sorted((p, root) for p in pages)


@dataclasses.dataclass(frozen=True, slots=True)
class PageJob:
    """One page under one setting: ``uri`` (``file://`` or ``http(s)://``), the folder its files must stay in."""

    uri: str
    root: str | None
    viewport: Viewport
    color_scheme: str

    @property
    def input_id(self) -> str:
        return f"{self.uri} [{self.viewport.spec} {self.color_scheme}]"


@dataclasses.dataclass(frozen=True, slots=True)
class RenderedJob:
    """A page setting rendered in this run: its ``_done`` key and the screenshots it made."""

    page_key: str
    screenshot_ids: tuple[str, ...]


def page_key(uri: str, sha256: str, viewport: Viewport, scheme: str, screens: int) -> str:
    """The ``_done`` key of a rendered page setting (``screenshot_id`` column of its ``_done`` row)."""
    return "page:" + stable_id(uri, sha256, viewport.spec, scheme, screens)


def episode_key(uri: str, sha256: str, viewport: Viewport, scheme: str, seed: int, steps: int) -> str:
    """The ``episode_id`` of a page setting explored with ``seed`` for ``steps`` actions under the current policy;
    ``"episode:" + episode_id`` is its ``_done`` key."""
    return stable_id("explore", uri, sha256, viewport.spec, scheme, seed, steps, explore.EXPLORE_VERSION)


def action_step(shot: Screenshot, step: explore.Step, scale: float, annotator: str, version: str, run_id: str):
    """The :class:`ActionStep` of an explored step taken on ``shot`` (a page's or an app's): ``source='recorded'``,
    ``action_args`` the recorded step (:meth:`explore.Step.recorded`) with its template ``instruction``."""
    args = {k: val for k, val in step.recorded(scale).items() if k != "action"}
    args["instruction"] = explore.instruction(step.action)
    return ActionStep(
        episode_id=shot.episode_id,
        step=shot.step_index,
        label_id=stable_id(shot.episode_id, shot.step_index, annotator, "explore", version),
        screenshot_id=shot.screenshot_id,
        action_type=explore.ACTION_OF[step.action.kind],
        action_args=json.dumps(args, sort_keys=True, separators=(",", ":")),
        thought=None,
        source="recorded",
        annotator=annotator,
        annotator_version=version,
        recipe_version=version,
        run_id=run_id,
    )


def render_origin(shot: Screenshot) -> str:
    """Which render made ``shot`` (page, setting, scroll; episode and step for a frame of an exploration): the key
    its DOM labels travel with."""
    r = shot.render
    parts = (
        shot.page_uri,
        r and (r.viewport_width, r.viewport_height, r.device_scale_factor, r.mobile),
        r and (r.color_scheme, r.scroll_x, r.scroll_y),
    )
    return stable_id(*parts, shot.episode_id, shot.step_index) if shot.episode_id else stable_id(*parts)


class _ListJobs(StageDoFn):
    """The config → a :class:`PageJob` per page and setting; bad URL lines are dead letters (``bad_url``)."""

    stage = STAGE
    count_inputs = False
    count_forwarded = False

    def __init__(self, config: RenderConfig):
        super().__init__(config.run_id)
        self._config = config

    def handle(self, _):
        cfg = self._config
        pages: list[tuple[str, str | None]] = []
        if cfg.pages:
            pages += [(f"file://{urllib.parse.quote(p)}", root) for p, root in list_pages(cfg.pages)]
        if cfg.urls:
            with open(cfg.urls, encoding="utf-8", errors="replace") as f:
                for n, line in enumerate(f, 1):
                    url = line.strip()
                    if not url or url.startswith("#"):
                        continue
                    scheme = urllib.parse.urlsplit(url).scheme
                    if scheme == "file":
                        path = urllib.parse.unquote(urllib.parse.urlsplit(url).path)
                        pages.append((url, os.path.dirname(path)))
                    elif scheme in ("http", "https") and urllib.parse.urlsplit(url).hostname:
                        pages.append((url, None))
                    else:
                        self.counters.total.inc()
                        where = f"{cfg.urls}:{n}"
                        yield Failure(where, "bad_url", f"{url[:200]!r} is not a file:// or http(s):// URL", where)
        for uri, root in dict(pages).items():  # a page named twice (a folder and a URL list) is rendered once
            for viewport in cfg.viewports:
                for scheme in cfg.color_schemes:
                    yield PageJob(uri, root, viewport, scheme)


def page_bytes(uri: str, timeout_s: float) -> bytes:
    """The page's document (for its content hash), at most :data:`MAX_PAGE_BYTES`.

    Raises:
        OSError / ValueError: unreadable, or over the size limit.
    """
    parts = urllib.parse.urlsplit(uri)
    if parts.scheme == "file":
        with open(urllib.parse.unquote(parts.path), "rb") as f:
            data = f.read(MAX_PAGE_BYTES + 1)
    else:
        with urllib.request.urlopen(uri, timeout=timeout_s) as r:  # noqa: S310 - http(s) only, checked above
            data = r.read(MAX_PAGE_BYTES + 1)
    if len(data) > MAX_PAGE_BYTES:
        raise ValueError(f"the page is over {MAX_PAGE_BYTES} bytes")
    return data


def write_image(output: str, png: bytes, sha: str) -> str:
    """Write ``png`` once under ``OUT/images/<sha>.png`` (temp name → rename); its path."""
    path = image_path(output, sha)
    if "://" in path:  # an object store: a write is visible whole once closed
        from apache_beam.io.filesystems import FileSystems

        if not FileSystems.exists(path):
            with FileSystems.create(path) as f:
                f.write(png)
        return path
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.tmp-{os.getpid()}"
        with open(tmp, "wb") as f:
            f.write(png)
        os.replace(tmp, path)
    return path


class _Render(StageDoFn):
    """A :class:`PageJob` → its screenshots (main), DOM labels, its :class:`RenderedJob`, dead letters."""

    stage = STAGE

    def __init__(self, config: RenderConfig):
        super().__init__(config.run_id)
        self._config = config

    def start(self):
        b, c = self._config.browser, self.counters

        def start_browser() -> BrowserHost:
            c.counter("browsers_started").inc()  # one per worker process (and per browser config)
            host = BrowserHost(b).start()
            fence = host.fence_settings  # a layer of the fence missing on this worker: in the manifest's counts
            c.counter("browsers_without_namespace").inc(0 if fence["network_namespace"] else 1)
            c.counter("browsers_without_sandbox").inc(0 if fence["sandbox"] else 1)
            return host

        # the browser is fetched per page, inside a bundle (where counters count), built on first use
        self._browser = lambda: per_process("browser", dataclasses.astuple(b), start_browser, BrowserHost.close)
        self._skipped, self._blocked, self._screens = (
            c.counter(n) for n in ("skipped_done", "blocked_requests", "screens")
        )

    def input_ref(self, job: PageJob) -> str:
        return job.input_id

    def process(self, job: PageJob, done: dict[str, bool]) -> Iterator:
        yield from self.emit(job, done)

    def handle(self, job: PageJob, done: dict[str, bool]) -> Iterator:
        cfg = self._config
        try:
            sha = hashlib.sha256(page_bytes(job.uri, cfg.browser.timeout_s)).hexdigest()
        except Exception as e:  # noqa: BLE001 - an unreadable page is this page's failure
            yield Failure(job.input_id, "unreadable", f"{type(e).__name__}: {e}", job.uri)
            return
        if cfg.explore:
            yield from self._episode(job, sha, done)
            return
        key = page_key(job.uri, sha, job.viewport, job.color_scheme, cfg.screens)
        if item_key(key, None, None) in done:
            self._skipped.inc()
            return
        try:
            page = self._browser().render(job.uri, job.root, job.viewport, job.color_scheme, cfg.screens)
        except RenderError as e:
            yield from self._refused(job, key, e)
            return
        self._blocked.inc(len(page.blocked))
        ids: list[str] = []
        for screen in page.screens:
            where = f"{job.input_id} scroll {screen.scroll[1]}"
            yield from self._screen(job, sha, screen, where, done, ids, blocked=len(page.blocked))
        yield beam.pvalue.TaggedOutput(PAGES, RenderedJob(key, tuple(ids)))

    def _refused(self, job: PageJob, key: str, e: RenderError) -> Iterator:
        """A page setting that could not be rendered or explored: a dead letter, and a ``_done`` row (rejected) when
        the reason is for good."""
        yield Failure(job.input_id, e.reason, e.message, job.uri)
        if e.reason in PERMANENT and self._config.config_hash:
            done = rejected_done(key, None, None, e.reason, self._config.config_hash, self.run_id)
            yield beam.pvalue.TaggedOutput(DONE, done)

    def _episode(self, job: PageJob, sha: str, done: dict[str, bool]) -> Iterator:
        """Explore the page setting into an episode: frames (main), their DOM labels, actions, its RenderedJob."""
        cfg, v = self._config, job.viewport
        eid = episode_key(job.uri, sha, v, job.color_scheme, cfg.explore_seed, cfg.explore)
        key = "episode:" + eid
        if item_key(key, None, None) in done:
            self._skipped.inc()
            return
        try:
            ep = explore.explore_page(self._browser(), job.uri, job.root, v, job.color_scheme, cfg.explore_settings)
        except RenderError as e:
            yield from self._refused(job, key, e)
            return
        c = self.counters
        self._blocked.inc(len(ep.blocked))
        c.counter("episodes").inc()
        c.counter("steps").inc(len(ep.steps))
        c.counter("noop_steps").inc(sum(s.noop for s in ep.steps))
        c.counter("blocked_steps").inc(sum(s.blocked for s in ep.steps))
        ids: list[str] = []
        for i, frame in enumerate(ep.frames):
            step = ep.steps[i] if i < len(ep.steps) else None  # the action taken on this frame
            recorded = step and json.dumps(step.recorded(v.scale), sort_keys=True, separators=(",", ":"))
            where = f"{job.input_id} episode {eid} step {i}"
            for out in self._screen(job, sha, frame, where, done, ids, eid, i, recorded, len(ep.blocked)):
                yield out
                if step is not None and isinstance(out, Screenshot):
                    yield beam.pvalue.TaggedOutput(ACTIONS, self._action(out, step, v.scale))
        yield beam.pvalue.TaggedOutput(PAGES, RenderedJob(key, tuple(ids)))

    def _action(self, shot: Screenshot, step: explore.Step, scale: float) -> ActionStep:
        return action_step(shot, step, scale, explore.NAME, explore.EXPLORE_VERSION, self.run_id)

    def _screen(
        self,
        job: PageJob,
        sha: str,
        screen: Screen,
        where: str,
        done: dict[str, bool],
        ids: list[str],
        episode_id: str | None = None,
        step_index: int | None = None,
        recorded: str | None = None,
        blocked: int = 0,
    ) -> Iterator:
        """One screen → its :class:`Screenshot` (written under ``OUT/images/``) and DOM labels, or a dead letter;
        nothing for a screen an earlier run finished. Its id goes on ``ids`` when it passed the image checks."""
        cfg, v = self._config, job.viewport
        self._screens.inc()
        shot_sha = hashlib.sha256(screen.png).hexdigest()
        try:
            info = inspect_image(screen.png, cfg.limits)
        except ImageRejected as e:
            yield Failure(where, e.reason, e.message, job.uri)
            return
        ids.append(shot_sha)
        if item_key(shot_sha, episode_id, step_index) in done:
            return  # this screen was finished by an earlier run (a page redone for another screen's sake)
        shot = Screenshot(
            screenshot_id=shot_sha,
            source_uri=write_image(cfg.output, screen.png, shot_sha),
            width=info.width,
            height=info.height,
            format=info.format,
            source_mode=info.mode,
            exif_orientation=info.orientation,
            byte_size=len(screen.png),
            ingest_time=utcnow(),
            run_id=self.run_id,
            page_uri=job.uri,
            page_sha256=sha,
            render=RenderSettings(
                v.width, v.height, v.scale, v.mobile, job.color_scheme, *screen.scroll, screen.page_scale, blocked
            ),
            episode_id=episode_id,
            step_index=step_index,
            recorded_action=recorded,
        )
        yield shot
        labels = dom_labels(
            shot, screen.elements, (v.width, v.height), v.scale, cfg.config_hash or "", self.run_id, cfg.recipes
        )
        for recipe, n in collections.Counter(label.recipe for label in labels).items():
            self.counters.counter(f"labels_{recipe}").inc(n)  # made here; the kept ones are the grounding rows
        if labels:  # one element per screenshot, not per label: Beam's cost is per element until the join
            yield beam.pvalue.TaggedOutput(LABELS, (render_origin(shot), tuple(labels)))


def _keep_labels(item):
    _, groups = item
    kept, seen, out = set(groups["kept"]), set(), []
    for origin, labels in groups["labels"]:
        if origin not in kept:
            continue
        for label in labels:
            if label.label_id not in seen:  # one set: the same render may have run twice
                seen.add(label.label_id)
                out.append(label)
    return [tuple(out)] if out else []


def labels_of_kept(kept: beam.PCollection, labels: beam.PCollection, label: str = "DomLabels") -> beam.PCollection:
    """The DOM labels (``RenderPages``' ``labels`` output) of the rendered screenshots in ``kept`` (ingest's good
    output), a tuple of :class:`GroundingLabel` s a screenshot (:class:`screenmill.stages.write.WriteShards` writes
    each; a batch, for Beam's cost is per element): a screenshot rendered twice with the same bytes keeps the labels of
    the render ingest kept."""
    rendered = kept | f"{label}Kept" >> beam.FlatMap(
        lambda s: [(s.screenshot_id, render_origin(s))] if s.page_uri else []
    )
    by_shot = labels | f"{label}ByShot" >> beam.Map(lambda ol: (ol[1][0].screenshot_id, ol))
    return (
        {"kept": rendered, "labels": by_shot}
        | f"{label}Join" >> beam.CoGroupByKey()
        | (f"{label}OfKept" >> beam.FlatMap(_keep_labels))
    )


def pages_done(job: RenderedJob, held: dict[str, bool], config_hash: str, run_id: str) -> list[Done]:
    """The ``_done`` row of a rendered page setting, unless one of its screenshots is held back for a retry."""
    if any(sid in held for sid in job.screenshot_ids):
        return []
    return [Done(job.page_key, None, None, config_hash, "labelled", None, run_id, utcnow())]


class RenderPages(Stage):
    """Render pages (see the module docstring).

    Output: :class:`screenmill.stages.base.StageOutputs` with ``good`` (:class:`Screenshot` records), ``dead_letter``,
    ``labels`` (``(origin, labels)`` pairs: a screenshot's tuple of GroundingLabels), ``pages``
    (:class:`RenderedJob`, page settings and episodes), ``done`` (``_done`` rows of pages rejected for good) and
    ``actions`` (:class:`ActionStep` records of explored episodes).

    Args:
        config: what to render and how.
        done: optional PCollection of item keys done under this run's config (pages and screens to skip).
    """

    def __init__(self, config: RenderConfig, done: beam.PCollection | None = None):
        super().__init__()
        self._config = config
        self._done_keys = done

    def expand(self, pbegin):
        jobs = self.apply_fn(pbegin | "Start" >> beam.Create([None]), "ListPages", _ListJobs(self._config))
        spread = jobs.good | "Spread" >> beam.Reshuffle()
        done_keys = self._done_keys if self._done_keys is not None else pbegin | "NoDone" >> beam.Create([])
        done = beam.pvalue.AsDict(done_keys | "DoneKeys" >> beam.Map(lambda k: (k, True)))
        out = self.apply_fn(spread, "Render", _Render(self._config), LABELS, PAGES, DONE, ACTIONS, done=done)
        dead = (jobs.dead_letter, out.dead_letter) | "DeadLetters" >> beam.Flatten()
        return StageOutputs(out.good, dead, labels=out.labels, pages=out.pages, done=out.done, actions=out.actions)
