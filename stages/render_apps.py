"""``RenderApps``: desktop apps → screenshots (``OUT/images/<sha256>.png``) + accessibility labels + dead letters.

Apps come from an ``--apps`` file (:mod:`screenmill.annotators.desktop.apps`: one a line). Each app is run under every
display of ``displays`` (or its own) in a desktop session
(:class:`screenmill.annotators.desktop.session.DesktopSession`: Xvfb, a private D-Bus and AT-SPI bus, no network, an
unprivileged user, time limits), one session per worker process (:class:`DesktopHost`, held by
:func:`screenmill.annotators.process.per_process`) and one app in it at a time, with a fresh HOME. Its first settled
screen becomes a :class:`Screenshot` (``page_uri`` ``app:<name>``, ``render`` the display, ``app`` the
:class:`screenmill.schemas.records.AppSettings`: command, Debian package and version, toolkit) that goes on through the
ordinary spine like a rendered page's, and its accessibility labels
(:func:`screenmill.annotators.desktop.a11y.a11y_labels`, ``annotator='a11y'``) go on the ``labels`` output as
``(origin, labels)`` pairs, kept for the screenshots ingest keeps (:func:`screenmill.stages.render.labels_of_kept`).

Incremental: an app setting's key is its name, command, environment additions, package version, display and the
a11y recipe version; under the run's ``config_hash`` a done key is not run again. ``pages`` output: a
:class:`screenmill.stages.render.RenderedJob` per app setting, for its ``_done`` row.

Exploration (``explore`` > 0): each app setting is explored into an episode instead
(:func:`screenmill.annotators.desktop.explore.explore_app`: up to ``explore`` actions chosen with ``explore_seed``),
the same shape as pages' episodes: every frame a :class:`Screenshot` with ``episode_id`` (:func:`app_episode_key`),
``step_index`` and, on every frame but the last, ``recorded_action``; its a11y labels (menus and popups opened
included); an :class:`ActionStep` per action on the ``actions`` output (``annotator='a11y'``). The episode is the unit
of done.

Counters: ``sessions`` started, ``sessions_without_namespace`` (no network namespace could be made here:
:func:`screenmill.annotators.netns.why_no_namespace`), ``screens``, ``skipped_done``, and for episodes ``episodes``,
``steps``, ``noop_steps``.

Reasons: ``bad_app_line``, ``app_start_failed``, ``app_timeout``, ``app_crashed``, ``app_window_storm`` (after any
of the last four the session is closed and the next app gets a fresh one), any :mod:`screenmill.schemas.images`
reason.
"""

from __future__ import annotations

import collections
import dataclasses
import hashlib
import json
import os
from collections.abc import Iterator

import apache_beam as beam
from screenmill.annotators.desktop import a11y, wm
from screenmill.annotators.desktop import explore as app_explore
from screenmill.annotators.desktop.apps import AppSpec, package_of, parse_app_line
from screenmill.annotators.desktop.session import AppError, DesktopSession, SessionConfig
from screenmill.annotators.dom.explore import ExploreSettings
from screenmill.annotators.dom.page import Viewport
from screenmill.annotators.process import per_process
from screenmill.annotators.wording import A11Y_OF_ALL, DOM_RECIPE_FAMILIES
from screenmill.schemas.images import ImageLimits, ImageRejected, inspect_image
from screenmill.schemas.keys import item_key, stable_id
from screenmill.schemas.records import AppSettings, RenderSettings, Screenshot, utcnow
from screenmill.stages.base import Failure, Stage, StageDoFn, StageOutputs
from screenmill.stages.render import ACTIONS, LABELS, PAGES, RenderedJob, action_step, render_origin, write_image

STAGE = "render_apps"


@dataclasses.dataclass(frozen=True)
class AppsConfig:
    """Which apps to run, how, and where the screenshots go.

    Attributes:
        output: the run's output root (screenshots under ``OUT/images/``).
        run_id: the run's id.
        apps: the ``--apps`` file.
        displays: the displays every app is run under (logical size, scale), unless a line names its own.
        session: the desktop session's limits.
        limits: the image checks every screenshot passes.
        config_hash: the run's output-determining hash.
        explore: actions per episode (0: no exploration, the first screen only).
        explore_seed: the exploration policy's seed.
        a11y_recipes: the recipe families of the a11y labels (keys of ``DOM_RECIPE_FAMILIES``; ``text`` alone by
            default; ``--a11y-recipes``).
    """

    output: str
    run_id: str
    apps: str
    displays: tuple[Viewport, ...] = (Viewport(1280, 800),)
    session: SessionConfig = SessionConfig()
    limits: ImageLimits = ImageLimits()
    config_hash: str | None = None
    explore: int = 0
    explore_seed: int = 0
    a11y_recipes: tuple[str, ...] = ("text",)

    def __post_init__(self):
        unknown = [f for f in self.a11y_recipes if f not in DOM_RECIPE_FAMILIES]
        if unknown or not self.a11y_recipes:
            known = ", ".join(DOM_RECIPE_FAMILIES)
            raise ValueError(f"--a11y-recipes must be among {known}, got {','.join(unknown) or 'none'}")
        if self.explore:
            ExploreSettings(self.explore, self.explore_seed)  # checks the steps
        if not os.path.isfile(self.apps):
            raise ValueError(f"--apps {self.apps}: no such file")
        if not self.displays:
            raise ValueError("at least one display is needed")
        if any(d.mobile for d in self.displays):
            raise ValueError("--displays: mobile emulation (m) is for pages only")

    @property
    def recipes(self) -> frozenset[str]:
        """The DOM recipes whose rules the a11y labels apply (those of the families of ``a11y_recipes``)."""
        return frozenset(r for f in self.a11y_recipes for r in DOM_RECIPE_FAMILIES[f])

    def hash_view(self) -> dict:
        """What of this config determines the output (for ``config_hash``): displays, window limit, recipes."""
        mix = {A11Y_OF_ALL[r]: a11y.ALL_RECIPE_VERSIONS[A11Y_OF_ALL[r]] for r in self.recipes}
        return {
            "displays": [d.spec for d in self.displays],
            "max_windows": self.session.max_windows,
            **(
                {"window_manager": [self.session.window_manager, wm.VERSION]}
                if self.session.window_manager != "none"
                else {}
            ),
            "a11y_recipes": dict(sorted(a11y.RECIPE_VERSIONS.items())),
            # only when asked for: the default's hash is the one it was before these recipes existed
            **({"a11y_recipe_mix": dict(sorted(mix.items()))} if self.a11y_recipes != ("text",) else {}),
            **({"explore": [self.explore, self.explore_seed, app_explore.EXPLORE_VERSION]} if self.explore else {}),
        }


@dataclasses.dataclass(frozen=True, slots=True)
class AppJob:
    """One app under one display."""

    app: AppSpec
    display: Viewport

    @property
    def input_id(self) -> str:
        return f"app:{self.app.name} [{self.display.spec}]"


def app_key(app: AppSpec, package_version: str | None, display: Viewport) -> str:
    """The ``_done`` key of an app setting (``screenshot_id`` column of its ``_done`` row)."""
    return "app:" + stable_id(app.name, app.argv, app.env, package_version, display.spec, a11y.VERSION)


def app_episode_key(app: AppSpec, package_version: str | None, display: Viewport, seed: int, steps: int) -> str:
    """The ``episode_id`` of an app setting explored with ``seed`` for ``steps`` actions under the current policy;
    ``"episode:" + episode_id`` is its ``_done`` key."""
    parts = (app.name, app.argv, app.env, package_version, display.spec, seed, steps, app_explore.EXPLORE_VERSION)
    return stable_id("explore-app", *parts)


def toolkit_name(toolkit: str, version: str) -> str:
    """``GTK3``, ``GTK4``, ``Qt5``, ...: the toolkit the app reported and its major version."""
    base = {"gtk": "GTK", "qt": "Qt"}.get(toolkit.lower(), toolkit or "unknown")
    return base + version.split(".")[0] if version[:1].isdigit() else base


class _ListApps(StageDoFn):
    """The config → an :class:`AppJob` per app and display; bad lines are dead letters (``bad_app_line``)."""

    stage = STAGE
    count_inputs = False
    count_forwarded = False

    def __init__(self, config: AppsConfig):
        super().__init__(config.run_id)
        self._config = config

    def handle(self, _):
        cfg = self._config
        seen: set[str] = set()
        with open(cfg.apps, encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                where = f"{cfg.apps}:{n}"
                try:
                    app = parse_app_line(line)
                    if app is not None and app.name in seen:
                        raise ValueError(f"app name {app.name!r} is used by an earlier line")
                except ValueError as e:
                    self.counters.total.inc()
                    yield Failure(where, "bad_app_line", str(e), where)
                    continue
                if app is None:
                    continue
                seen.add(app.name)
                for display in (app.display,) if app.display else cfg.displays:
                    yield AppJob(app, display)


class DesktopHost:
    """A worker process's desktop session: the one alive for the display asked, else a fresh one."""

    def __init__(self, config: SessionConfig):
        self.config = config
        self.session: DesktopSession | None = None
        self.started = 0

    def session_for(self, display: Viewport) -> DesktopSession:
        if self.session is not None and (not self.session.alive or self.session.display != display):
            self.close()
        if self.session is None:
            self.session = DesktopSession(display, self.config).start()
            self.started += 1
        return self.session

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None


class _RenderApp(StageDoFn):
    """An :class:`AppJob` → its screenshot (main), a11y labels, its :class:`RenderedJob`, dead letters."""

    stage = STAGE

    def __init__(self, config: AppsConfig):
        super().__init__(config.run_id)
        self._config = config

    def start(self):
        s = self._config.session
        self._host = lambda: per_process("desktop", dataclasses.astuple(s), lambda: DesktopHost(s), DesktopHost.close)
        c = self.counters
        self._skipped, self._sessions, self._screens = (c.counter(n) for n in ("skipped_done", "sessions", "screens"))
        self._unfenced = c.counter("sessions_without_namespace")
        self._actor = (a11y.NAME, app_explore.EXPLORE_VERSION, self.run_id)  # who the actions rows say took them

    def input_ref(self, job: AppJob) -> str:
        return job.input_id

    def process(self, job: AppJob, done: dict[str, bool]) -> Iterator:
        yield from self.emit(job, done)

    def handle(self, job: AppJob, done: dict[str, bool]) -> Iterator:
        cfg, app, d = self._config, job.app, job.display
        package, version = package_of(app.argv[0])
        eid = app_episode_key(app, version, d, cfg.explore_seed, cfg.explore) if cfg.explore else None
        key = "episode:" + eid if eid else app_key(app, version, d)
        if item_key(key, None, None) in done:
            self._skipped.inc()
            return
        host = self._host()
        try:
            before = host.started
            session = host.session_for(d)
            self._sessions.inc(host.started - before)
            if host.started != before and not session.settings.get("network_namespace"):
                self._unfenced.inc()  # said once per process too (netns.say_once)
            session.run_app(app)
            if eid:
                episode = app_explore.explore_app(session, app, ExploreSettings(cfg.explore, cfg.explore_seed))
            else:
                episode = app_explore.ExploredApp([app_explore.Frame(session.capture(app), [])], [])
            session.stop_app()
        except AppError as e:
            host.close()  # a fresh session for the next app
            yield Failure(job.input_id, e.reason, e.message, app.command)
            return
        c = self.counters
        if eid:
            c.counter("episodes").inc()
            c.counter("steps").inc(len(episode.steps))
            c.counter("noop_steps").inc(sum(s.noop for s in episode.steps))
        ids: list[str] = []
        for i, frame in enumerate(episode.frames):
            step = episode.steps[i] if i < len(episode.steps) else None  # the action taken on this frame
            where = f"{job.input_id} episode {eid} step {i}" if eid else job.input_id
            for out in self._screen(job, session, frame.capture, package, version, where, eid and (eid, i, step)):
                if isinstance(out, Screenshot):
                    ids.append(out.screenshot_id)
                    if step is not None:
                        yield beam.pvalue.TaggedOutput(ACTIONS, action_step(out, step, d.scale, *self._actor))
                yield out
        yield beam.pvalue.TaggedOutput(PAGES, RenderedJob(key, tuple(ids)))

    def _screen(self, job: AppJob, session, capture, package, version, where: str, episode) -> Iterator:
        """One settled screen → its :class:`Screenshot` and a11y labels, or a dead letter (an image check)."""
        cfg, app, d = self._config, job.app, job.display
        self._screens.inc()
        sha = hashlib.sha256(capture.png).hexdigest()
        try:
            info = inspect_image(capture.png, cfg.limits)
        except ImageRejected as e:
            yield Failure(where, e.reason, e.message, app.command)
            return
        eid, index, step = episode or (None, None, None)
        recorded = step and json.dumps(step.recorded(d.scale), sort_keys=True, separators=(",", ":"))
        toolkit = toolkit_name(capture.toolkit, capture.toolkit_version)
        shot = Screenshot(
            screenshot_id=sha,
            source_uri=write_image(cfg.output, capture.png, sha),
            width=info.width,
            height=info.height,
            format=info.format,
            source_mode=info.mode,
            exif_orientation=info.orientation,
            byte_size=len(capture.png),
            ingest_time=utcnow(),
            run_id=self.run_id,
            page_uri=f"app:{app.name}",
            render=RenderSettings(d.width, d.height, d.scale, False, "light", 0, 0),
            app=AppSettings(
                app.name,
                app.command,
                package,
                version,
                toolkit,
                capture.toolkit_version,
                window_titles=wm.title_bars(capture, session.screen_size),
            ),
            episode_id=eid,
            step_index=index,
            recorded_action=recorded,
        )
        yield shot
        els = a11y.elements(capture, session.screen_size, d.scale)
        labels = a11y.a11y_labels(
            shot, els, (d.width, d.height), d.scale, cfg.config_hash or "", self.run_id, cfg.recipes, capture.png
        )
        for recipe, n in collections.Counter(label.recipe for label in labels).items():
            self.counters.counter(f"labels_{recipe}").inc(n)  # made here; the kept ones are the grounding rows
        if labels:
            yield beam.pvalue.TaggedOutput(LABELS, (render_origin(shot), tuple(labels)))


class RenderApps(Stage):
    """Run desktop apps and label their screens (see the module docstring).

    Output: :class:`screenmill.stages.base.StageOutputs` with ``good`` (:class:`Screenshot` records), ``dead_letter``,
    ``labels`` (``(origin, labels)`` pairs), ``pages`` (:class:`RenderedJob` per app setting or episode) and
    ``actions`` (:class:`ActionStep` records of explored episodes).

    Args:
        config: which apps and how.
        done: optional PCollection of item keys done under this run's config (app settings to skip).
    """

    def __init__(self, config: AppsConfig, done: beam.PCollection | None = None):
        super().__init__()
        self._config = config
        self._done_keys = done

    def expand(self, pbegin):
        jobs = self.apply_fn(pbegin | "Start" >> beam.Create([None]), "ListApps", _ListApps(self._config))
        spread = jobs.good | "Spread" >> beam.Reshuffle()
        done_keys = self._done_keys if self._done_keys is not None else pbegin | "NoDone" >> beam.Create([])
        done = beam.pvalue.AsDict(done_keys | "DoneKeys" >> beam.Map(lambda k: (k, True)))
        out = self.apply_fn(spread, "RenderApp", _RenderApp(self._config), LABELS, PAGES, ACTIONS, done=done)
        dead = (jobs.dead_letter, out.dead_letter) | "DeadLetters" >> beam.Flatten()
        return StageOutputs(out.good, dead, labels=out.labels, pages=out.pages, actions=out.actions)
