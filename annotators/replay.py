"""Replay recorded episodes: act out an episode's recorded actions in a fresh session, compare the frame hashes.

An explored episode (a page's, :func:`screenmill.annotators.dom.explore.explore_page`, or a desktop app's,
:func:`screenmill.annotators.desktop.explore.explore_app`) is a run of ``screenshots`` rows with one ``episode_id``,
``step_index`` 0..n and, on every frame but the last, the ``recorded_action`` taken on it (the explorers' recorded
format, :meth:`screenmill.annotators.dom.explore.Step.recorded`: ``type``, ``x``/``y`` in screenshot pixels, typed
``content``, a pressed ``key``). :func:`replay_episode` starts a fresh browser or desktop session at the recorded
settings (the viewport or display and its scale, the colour scheme; an app's command line and the environment its
``--apps`` line gave), performs exactly those actions through the explorer that recorded them (its ``replay``
argument), and compares every frame's sha256 with the recorded ``screenshot_id``.

Failures are results, never exceptions: an episode whose rows do not make an episode (a step missing, a frame without
its action) or whose session fails (the app does not start, a step times out) is a :class:`Replayed` with ``error``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import urllib.parse
from collections import defaultdict
from collections.abc import Iterable, Mapping

APP_PREFIX = "app:"


@dataclasses.dataclass(slots=True)
class Replayed:
    """One episode replayed: ``recorded`` (the frames' hashes in the table), ``got`` (the replay's), ``error`` (why
    it could not be replayed), ``notes`` (what differs from the recorded settings, e.g. a package version)."""

    episode_id: str
    source: str
    recorded: list[str]
    got: list[str] = dataclasses.field(default_factory=list)
    error: str | None = None
    notes: list[str] = dataclasses.field(default_factory=list)

    @property
    def mismatched(self) -> list[int]:
        """The steps whose frame hashes differ from the recorded ones (a frame the replay did not reach included)."""
        n = max(len(self.recorded), len(self.got))
        pad = self.got + [None] * (n - len(self.got))
        return [i for i in range(n) if i >= len(self.recorded) or pad[i] != self.recorded[i]]

    @property
    def ok(self) -> bool:
        return self.error is None and not self.mismatched


def episodes(rows: Iterable[Mapping]) -> dict[str, list[dict]]:
    """``screenshots`` rows → the frames of each episode (rows with an ``episode_id``), by ``step_index``."""
    by: dict[str, dict[int, dict]] = defaultdict(dict)
    for row in rows:
        if row.get("episode_id") and row.get("step_index") is not None:
            by[row["episode_id"]].setdefault(row["step_index"], dict(row))
    return {eid: [steps[i] for i in sorted(steps)] for eid, steps in sorted(by.items())}


def recorded_actions(frames: list[dict]) -> list[dict]:
    """The recorded action of every frame but the last.

    Raises:
        ValueError: the frames are not steps 0..n, a frame but the last has no recorded action, or one is not an
            explored action (no ``type``).
    """
    if [f["step_index"] for f in frames] != list(range(len(frames))):
        raise ValueError(f"steps {[f['step_index'] for f in frames]} are not 0..{len(frames) - 1}")
    out = []
    for f in frames[:-1]:
        try:
            action = json.loads(f.get("recorded_action") or "null")
        except json.JSONDecodeError:
            action = None
        if not isinstance(action, dict) or "type" not in action:
            raise ValueError(f"step {f['step_index']} has no explored recorded action")
        out.append(action)
    return out


def _hashes(pngs: Iterable[bytes]) -> list[str]:
    return [hashlib.sha256(png).hexdigest() for png in pngs]


def replay_app(frames: list[dict], actions: list[dict], apps: Mapping | None = None, config=None) -> Replayed:
    """Replay an app episode in a fresh desktop session (see the module docstring).

    Args:
        frames: the episode's ``screenshots`` rows, by step.
        actions: their recorded actions (:func:`recorded_actions`).
        apps: :class:`screenmill.annotators.desktop.apps.AppSpec` by name (an ``--apps`` file's): the environment
            additions of the app's line, which the table does not hold; an app not in it runs with none.
        config: the :class:`screenmill.annotators.desktop.session.SessionConfig` (default: the run's default).
    """
    from screenmill.annotators.desktop.apps import AppSpec, package_of
    from screenmill.annotators.desktop.explore import explore_app
    from screenmill.annotators.desktop.session import AppError, DesktopSession, SessionConfig
    from screenmill.annotators.dom.explore import ExploreSettings
    from screenmill.annotators.dom.page import Viewport

    first = frames[0]
    rec, r = first["app"], first["render"]
    got = Replayed(first["episode_id"], first["page_uri"], [f["screenshot_id"] for f in frames])
    known = (apps or {}).get(rec["name"])
    argv = tuple(json.loads(rec["command"]))
    app = AppSpec(rec["name"], argv, known.env if known is not None and known.argv == argv else ())
    _, version = package_of(argv[0])
    if version != rec["package_version"]:
        got.notes.append(f"{rec['package']} is {version}, the episode was recorded with {rec['package_version']}")
    display = Viewport(r["viewport_width"], r["viewport_height"], r["device_scale_factor"])
    session = DesktopSession(display, config or SessionConfig())
    try:
        session.start()
        session.run_app(app)
        episode = explore_app(session, app, ExploreSettings(max(len(actions), 1)), replay=actions)
        got.got = _hashes(f.capture.png for f in episode.frames)
    except AppError as e:
        got.error = f"{e.reason}: {e.message}"
    finally:
        session.close()
    return got


def replay_page(frames: list[dict], actions: list[dict], root: str | None = None, browser=None) -> Replayed:
    """Replay a page episode in a fresh browser (see the module docstring).

    Args:
        frames / actions: as for :func:`replay_app`.
        root: the folder the fence allows (the run's ``--pages`` folder); default: a ``file://`` page's own folder.
        browser: the :class:`screenmill.annotators.dom.browser.BrowserConfig` (default: the run's default).
    """
    from screenmill.annotators.dom.browser import BrowserConfig, BrowserHost
    from screenmill.annotators.dom.explore import ExploreSettings, explore_page
    from screenmill.annotators.dom.page import RenderError, Viewport

    first = frames[0]
    r, uri = first["render"], first["page_uri"]
    got = Replayed(first["episode_id"], uri, [f["screenshot_id"] for f in frames])
    if root is None and uri.startswith("file:"):
        root = os.path.dirname(urllib.parse.unquote(urllib.parse.urlsplit(uri).path))
    viewport = Viewport(r["viewport_width"], r["viewport_height"], r["device_scale_factor"], r["mobile"])
    host = BrowserHost(browser or BrowserConfig())
    try:
        host.start()
        settings = ExploreSettings(max(len(actions), 1))
        episode = explore_page(host, uri, root, viewport, r["color_scheme"], settings, replay=actions)
        got.got = _hashes(f.png for f in episode.frames)
    except RenderError as e:
        got.error = f"{e.reason}: {e.message}"
    finally:
        host.close()
    return got


def replay_episode(frames: list[dict], apps: Mapping | None = None, root: str | None = None) -> Replayed:
    """Replay one episode (an app's or a page's, by its ``page_uri``); a malformed episode is an ``error``."""
    first = frames[0]
    try:
        actions = recorded_actions(frames)
    except ValueError as e:
        recorded = [f["screenshot_id"] for f in frames]
        return Replayed(first["episode_id"], first.get("page_uri") or "", recorded, [], str(e))
    if (first.get("page_uri") or "").startswith(APP_PREFIX):
        return replay_app(frames, actions, apps)
    return replay_page(frames, actions, root)
