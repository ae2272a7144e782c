"""``IngestScreenshots``: files and episode folders → validated :class:`Screenshot` records + dead letters.

Input is a Beam FileSystems pattern (local paths; ``gs://`` / ``s3://`` through Beam's own filesystems when their
extras are installed) or a directory (read recursively). Two kinds of input are recognised:

* image files (``.png``, ``.jpg``/``.jpeg``, ``.webp``; other image extensions are dead-lettered as
  ``unsupported_format``), validated by :func:`screenmill.schemas.images.inspect_image`;
* episode folders: ``<episode>/episode.json`` + ``steps.jsonl`` (or a ``steps`` list inside ``episode.json``) + the
  images the steps name. Step images become screenshots with ``episode_id`` + ``step_index``; images in the folder
  that no step names are ingested as plain screenshots, so nothing is lost.

Other files (READMEs, licences, sidecar JSON) are not inputs: they are counted as ``ignored`` and listed in the run
summary, never silently dropped. Exact duplicates (same sha256, same episode step or both loose) collapse to the
copy with the smallest URI; the others go to the dead-letter output as ``duplicate``, and each also gets a
:class:`DuplicateAlias` on the ``aliases`` output (its URI → the kept screenshot), for stages that look files up by
name.

Images are not carried through the pipeline: records hold the URI and the content hash, and the stages that need
pixels re-read the file and check the hash (memory stays flat however many screenshots a run has).
"""

from __future__ import annotations

import dataclasses
import glob
import hashlib
import json
import os
import posixpath
from collections.abc import Iterable, Iterator

import apache_beam as beam
from apache_beam.io import fileio
from apache_beam.io.filesystem import CompressionTypes, FileMetadata
from apache_beam.io.filesystems import FileSystems
from screenmill.schemas.images import ImageLimits, ImageRejected, inspect_image
from screenmill.schemas.keys import item_key
from screenmill.schemas.records import Screenshot, utcnow
from screenmill.stages.base import Failure, Stage, StageDoFn, StageOutputs
from screenmill.stages.done import rejected_done
from screenmill.stages.store.input_guard import Rejected, check_local_file, input_root, printable

STAGE = "ingest"
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".webp")
OTHER_IMAGE_EXTENSIONS = (".gif", ".bmp", ".tif", ".tiff", ".ico", ".heic", ".heif", ".avif", ".jxl", ".jp2")
EPISODE_MANIFEST = "episode.json"
STEPS_FILE = "steps.jsonl"
DONE = "done"
ALIASES = "aliases"
SKIPPED = "skipped"  # (path, content id) of each file skipped as done: what an instructions file may still name


@dataclasses.dataclass(frozen=True)
class IngestConfig:
    """What to read and what to accept.

    Attributes:
        pattern: a FileSystems glob (``**`` recurses) or a directory (read recursively); None: no files (a run of
            rendered pages only).
        run_id: the run's id, stamped on every record.
        limits: image size/format limits (decompression-bomb pixel limit among them).
        max_file_bytes: files larger than this are ``too_large`` without being read.
        reshuffle: redistribute matched files so parallel workers share the work.
        config_hash: the run's output-determining hash; set, images rejected after hashing get a ``_done`` row
            (``done`` output) so incremental runs do not reject them again.
    """

    pattern: str | None
    run_id: str
    limits: ImageLimits = ImageLimits()
    max_file_bytes: int = 256 * 1024 * 1024
    reshuffle: bool = True
    config_hash: str | None = None

    def __post_init__(self):
        if self.pattern is not None and (not self.pattern or not isinstance(self.pattern, str)):
            raise ValueError("IngestConfig.pattern must be a non-empty path or glob (or None: no files)")
        if not self.run_id:
            raise ValueError("IngestConfig.run_id must be set")
        if self.max_file_bytes <= 0:
            raise ValueError(f"IngestConfig.max_file_bytes must be > 0, got {self.max_file_bytes}")


def expand_pattern(pattern: str) -> str:
    """A directory (local or object-store prefix without glob characters) becomes ``<dir>/**``."""
    if any(c in pattern for c in "*?["):
        return pattern
    scheme = FileSystems.get_scheme(pattern)
    if scheme in (None, "file"):
        local = pattern[len("file://") :] if pattern.startswith("file://") else pattern
        if os.path.isdir(local):
            return os.path.join(os.path.abspath(local), "**")
        return os.path.abspath(local)
    if pattern.endswith("/") or not FileSystems.exists(pattern):
        return pattern.rstrip("/") + "/**"
    return pattern


def _dirname(path: str) -> str:
    return posixpath.dirname(path) if "://" in path else os.path.dirname(path)


def _basename(path: str) -> str:
    return posixpath.basename(path) if "://" in path else os.path.basename(path)


def _join(directory: str, name: str) -> str:
    return FileSystems.join(directory, name)


def _read(path: str) -> bytes:
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
        return f.read()


def _ext(path: str) -> str:
    return os.path.splitext(path)[1].lower()


@dataclasses.dataclass(frozen=True, slots=True)
class DuplicateAlias:
    """A file ingest set aside as a ``duplicate``: its URI names the kept screenshot too (the same bytes).

    Attributes:
        copy_uri: the file set aside.
        screenshot_id: the content id both files share.
        kept_uri: the file kept, the ``source_uri`` of the screenshot record that went on.
    """

    copy_uri: str
    screenshot_id: str
    kept_uri: str


class _IngestFile(StageDoFn):
    """One matched file → Screenshot records (an episode manifest gives one per step) + dead letters.

    One file can hold several inputs (an episode's steps): ``total`` is counted per image or step, not per file.
    """

    stage = STAGE
    count_inputs = False

    def __init__(self, config: IngestConfig):
        super().__init__(config.run_id)
        self._config = config

    def start(self):
        self._ignored = self.counters.counter("ignored")
        self._skipped = self.counters.counter("skipped_done")
        self._done: dict[str, bool] = {}

    def _episode_set(self, episode_dirs: Iterable[str]) -> set[str]:
        """The side input as a set, built once per side-input object rather than once per file."""
        cached = getattr(self, "_dirs_cache", None)
        if cached is None or cached[0] is not episode_dirs:
            cached = self._dirs_cache = (episode_dirs, set(episode_dirs))
        return cached[1]

    def process(self, meta: FileMetadata, episode_dirs: Iterable[str], done: dict[str, bool]) -> Iterator:
        yield from self.emit(meta, episode_dirs, done)

    def handle(self, meta: FileMetadata, episode_dirs: Iterable[str], done: dict[str, bool]) -> Iterator:
        self._done = done
        path = meta.path
        name = _basename(path)
        directory = _dirname(path)
        ext = _ext(path)
        if name == EPISODE_MANIFEST:
            yield from self._episode(path, directory)
        elif name == STEPS_FILE and printable(directory) in self._episode_set(episode_dirs):
            pass  # read together with its episode.json
        elif ext in IMAGE_EXTENSIONS or ext in OTHER_IMAGE_EXTENSIONS:
            if printable(directory) not in self._episode_set(episode_dirs):  # else its episode.json ingests it
                yield from self._image(path, meta.size_in_bytes)
        else:
            self._ignored.inc()

    def _image(
        self,
        path: str,
        size: int | None,
        episode_id: str | None = None,
        step: int | None = None,
        task: str | None = None,
        recorded_action: str | None = None,
    ):
        self.counters.total.inc()
        try:  # before any read: no link out of the input root, no FIFO or device, a UTF-8 name
            real_size = check_local_file(path, input_root(expand_pattern(self._config.pattern)))
        except Rejected as e:
            yield Failure(printable(path), e.reason, e.message, printable(path))
            return
        size = size if real_size is None else real_size
        if _ext(path) in OTHER_IMAGE_EXTENSIONS:
            yield Failure(path, "unsupported_format", f"{_ext(path)} files are not accepted", path)
            return
        if size is not None and size > self._config.max_file_bytes:
            msg = f"{size} bytes is over the {self._config.max_file_bytes} byte limit"
            yield Failure(path, "too_large", msg, path)
            return
        try:
            data = _read(path)
        except Exception as e:  # noqa: BLE001 - any read failure is this input's fault, not the run's
            yield Failure(path, "unreadable", f"{type(e).__name__}: {e}", path)
            return
        sha = hashlib.sha256(data).hexdigest()
        if item_key(sha, episode_id, step) in self._done:
            self._skipped.inc()  # done under this run's config by an earlier run: nothing to do
            yield beam.pvalue.TaggedOutput(SKIPPED, (printable(path), sha))
            return
        try:
            info = inspect_image(data, self._config.limits)
        except Exception as e:  # noqa: BLE001 - a decoder bug on hostile bytes is still a bad input
            reason, message = (e.reason, e.message) if isinstance(e, ImageRejected) else ("corrupt_image", None)
            yield Failure(path, reason, message or f"{type(e).__name__}: {e}", path)
            if self._config.config_hash:
                done = rejected_done(sha, episode_id, step, reason, self._config.config_hash, self.run_id)
                yield beam.pvalue.TaggedOutput(DONE, done)
            return
        yield Screenshot(
            screenshot_id=sha,
            source_uri=path,
            width=info.width,
            height=info.height,
            format=info.format,
            source_mode=info.mode,
            exif_orientation=info.orientation,
            byte_size=len(data),
            ingest_time=utcnow(),
            run_id=self.run_id,
            episode_id=episode_id,
            step_index=step,
            episode_task=task,
            recorded_action=recorded_action,
        )

    def _folder_images(self, directory: str) -> list[tuple[str, int]]:
        found = FileSystems.match([_join(directory, "*")])[0].metadata_list
        return sorted(
            (m.path, m.size_in_bytes)
            for m in found
            if _dirname(m.path) == directory and _ext(m.path) in IMAGE_EXTENSIONS + OTHER_IMAGE_EXTENSIONS
        )

    def _episode(self, manifest_path: str, directory: str):
        c = self.counters
        referenced: set[str] = set()
        max_bytes, root_dir = self._config.max_file_bytes, input_root(expand_pattern(self._config.pattern))
        try:
            check_local_file(manifest_path, root_dir, max_bytes)
            episode = json.loads(_read(manifest_path).decode("utf-8"))
            if not isinstance(episode, dict):
                raise ValueError("episode.json must hold a JSON object")
            json.dumps(episode, ensure_ascii=False).encode("utf-8")  # lone surrogates (\udcff) cannot be stored
            episode_id = str(episode.get("episode_id") or _basename(directory))
            task = _task(episode)
            steps_path = _join(directory, STEPS_FILE)
            if FileSystems.exists(steps_path):
                check_local_file(steps_path, root_dir, max_bytes)
                lines = _read(steps_path).decode("utf-8").splitlines()
                steps_src = [(f"{steps_path}:{i + 1}", line) for i, line in enumerate(lines) if line.strip()]
            elif isinstance(episode.get("steps"), list):
                steps_src = [(f"{manifest_path}#steps[{i}]", s) for i, s in enumerate(episode["steps"])]
            else:
                raise ValueError(f"no {STEPS_FILE} and no 'steps' list in {EPISODE_MANIFEST}")
        except Exception as e:  # noqa: BLE001 - a bad manifest is bad input; its images still get ingested below
            c.total.inc()
            where = printable(manifest_path)
            yield Failure(where, "bad_episode_manifest", f"{type(e).__name__}: {e}", where)
            for path, size in self._folder_images(directory):
                yield from self._image(path, size)
            return

        root = directory.rstrip("/") + "/"
        sizes = dict(self._folder_images(directory))
        first_at: dict[int, str] = {}
        for where, raw in steps_src:
            try:
                step = json.loads(raw) if isinstance(raw, str) else raw
                if not isinstance(step, dict):
                    raise ValueError("a step must be a JSON object")
                json.dumps(step, ensure_ascii=False).encode("utf-8")
                raw_index = step["step"]
                index = int(raw_index)
                if isinstance(raw_index, bool) or (index != raw_index and not isinstance(raw_index, str)):
                    raise ValueError(f"'step' must be an integer, got {raw_index!r}")
                if not 0 <= index < 2**31:
                    raise ValueError(f"'step' {index} is outside 0..2**31-1")
                rel = step["screenshot"]
                if not isinstance(rel, str) or not rel:
                    raise ValueError("'screenshot' must be a non-empty relative path")
                if index in first_at:
                    raise ValueError(f"step {index} is already named at {first_at[index]}")
                first_at[index] = where
            except Exception as e:  # noqa: BLE001
                c.total.inc()
                yield Failure(where, "bad_episode_manifest", f"{type(e).__name__}: {e}", where)
                continue
            target = (
                posixpath.normpath(posixpath.join(root, rel))
                if "://" in root
                else os.path.normpath(os.path.join(root, rel))
            )
            if rel.startswith(("/", "\\")) or "://" in rel or not target.startswith(root):
                c.total.inc()
                msg = f"step {index} names {rel!r}, which is outside the episode folder"
                yield Failure(where, "path_outside_root", msg, where)
                continue
            referenced.add(target)
            if target not in sizes and not FileSystems.exists(target):
                c.total.inc()
                yield Failure(where, "missing_file", f"step {index}: {rel} does not exist", target)
                continue
            yield from self._image(target, sizes.get(target), episode_id, index, task, _recorded_action(step))
        for path, size in sizes.items():
            if path not in referenced:
                yield from self._image(path, size)


def _task(episode: dict) -> str | None:
    """The episode's natural-language goal (``task_en``, ``task``, ``goal`` or ``instruction``), if it has one."""
    for key in ("task_en", "task", "goal", "instruction"):
        value = episode.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _recorded_action(step: dict) -> str | None:
    """The step's recorded action(s) (``actions`` or ``action``) as compact JSON, kept for inverse labelling."""
    value = step.get("actions", step.get("action"))
    return None if value is None else json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def dangling_links(pattern: str) -> list[str]:
    """Local symlinks under ``pattern`` whose target does not exist (Beam's file listing skips them silently)."""
    if FileSystems.get_scheme(pattern) not in (None, "file"):
        return []
    local = pattern[len("file://") :] if pattern.startswith("file://") else pattern
    if local.endswith("/**") and os.path.isdir(local[:-3]):
        found = [  # os.walk never follows a symlinked folder: a link loop cannot make it spin
            os.path.join(folder, name)
            for folder, dirs, files in os.walk(local[:-3], followlinks=False)
            for name in dirs + files
        ]
    else:
        found = glob.glob(local)
    return sorted(p for p in found if os.path.islink(p) and not os.path.exists(p))


class _DanglingLinks(StageDoFn):
    """The input pattern → an ``unreadable`` dead letter per dangling symlink it matches, so none goes unseen."""

    stage = STAGE
    count_inputs = False

    def handle(self, pattern: str):
        for path in dangling_links(pattern):
            self.counters.total.inc()
            name = printable(path)
            target = printable(os.readlink(path))
            yield Failure(name, "unreadable", f"a symlink to {target}, which does not exist", name)


class _CollapseDuplicates(StageDoFn):
    """(dedup key, occurrences) → the occurrence with the smallest URI; the others are dead-lettered as
    ``duplicate`` (taken back from ``forwarded``) and named on the ``aliases`` output."""

    stage = STAGE
    count_inputs = False
    count_forwarded = False  # counted when _IngestFile forwarded them

    def handle(self, item):
        _, shots = item
        shots = sorted(shots, key=_occurrence_order)
        kept = shots[0]
        yield kept
        for dup in shots[1:]:
            if dup.page_uri is None:
                self.counters.forwarded.dec()
            else:  # a rendered screenshot: counted by the render stage, so here only as the duplicate it is
                self.counters.total.inc()
            alias = DuplicateAlias(dup.source_uri, kept.screenshot_id, kept.source_uri)
            yield beam.pvalue.TaggedOutput(ALIASES, alias)
            msg = f"same bytes (sha256 {dup.screenshot_id[:16]}…) as {kept.source_uri}"
            yield Failure(dup.source_uri, "duplicate", msg, kept.source_uri)


def _occurrence_order(shot: Screenshot):
    """Which copy of the same bytes is kept: the smallest URI; rendered screenshots (one content-addressed URI) by
    their page and render settings."""
    r = shot.render
    return (shot.source_uri, shot.page_uri or "", "" if r is None else repr(r))


def _dedup_key(shot: Screenshot):
    return (shot.screenshot_id, shot.episode_id or "", -1 if shot.step_index is None else shot.step_index)


class IngestScreenshots(Stage):
    """Read, validate, hash and de-duplicate screenshots.

    Output: :class:`screenmill.stages.base.StageOutputs` with ``good`` (:class:`Screenshot` records, ``tile_plan``
    unset), ``dead_letter`` (:class:`DeadLetter` records; reasons: ``empty_file``, ``not_an_image``, ``truncated``,
    ``corrupt_image``, ``decompression_bomb``, ``too_small``, ``too_large``, ``extreme_aspect_ratio``,
    ``unsupported_format``, ``unreadable``, ``bad_episode_manifest``, ``path_outside_root``, ``missing_file``,
    ``duplicate``), ``done`` (the ``_done`` rows of inputs rejected after hashing, when ``config.config_hash`` is
    set) and ``aliases`` (a :class:`DuplicateAlias` per ``duplicate``).

    Args:
        config: what to read and accept.
        done: optional PCollection of item keys (:func:`screenmill.schemas.keys.item_key`) already done under this
        run's
            config: those occurrences are skipped right after hashing (counted as ``skipped_done``).
        rendered: optional PCollection of :class:`Screenshot` records made by ``RenderPages`` (already checked):
            de-duplicated together with the files.
    """

    def __init__(
        self, config: IngestConfig, done: beam.PCollection | None = None, rendered: beam.PCollection | None = None
    ):
        super().__init__()
        self._config = config
        self._done_keys = done
        self._rendered = rendered

    def expand(self, pbegin):
        if self._config.pattern is None:
            return self._rendered_only(pbegin)
        pattern = expand_pattern(self._config.pattern)
        matched = pbegin | "Match" >> fileio.MatchFiles(pattern)
        patterns = pbegin | "Pattern" >> beam.Create([pattern])
        dangling = self.apply_fn(patterns, "DanglingLinks", _DanglingLinks(self._config.run_id))
        episode_dirs = (
            matched
            | "EpisodeManifests" >> beam.Filter(lambda m: _basename(m.path) == EPISODE_MANIFEST)
            | "EpisodeDirs" >> beam.Map(lambda m: printable(_dirname(m.path)))  # str coder: UTF-8 only
        )
        if self._config.reshuffle:
            matched = matched | "Spread" >> beam.Reshuffle()
        if self._done_keys is None:
            done_keys = pbegin | "NoDoneIndex" >> beam.Create([])
        else:
            done_keys = self._done_keys
        done_dict = beam.pvalue.AsDict(done_keys | "DoneKeys" >> beam.Map(lambda k: (k, True)))
        read = self.apply_fn(
            matched,
            "Validate",
            _IngestFile(self._config),
            DONE,
            SKIPPED,
            episode_dirs=beam.pvalue.AsList(episode_dirs),
            done=done_dict,
        )
        good = read.good
        if self._rendered is not None:
            good = (good, self._rendered) | "WithRendered" >> beam.Flatten()
        grouped = (
            good | "KeyByContent" >> beam.Map(lambda s: (_dedup_key(s), s)) | "GroupDuplicates" >> beam.GroupByKey()
        )
        deduped = self.apply_fn(grouped, "Collapse", _CollapseDuplicates(self._config.run_id), ALIASES)
        dead = (read.dead_letter, deduped.dead_letter, dangling.dead_letter) | "DeadLetters" >> beam.Flatten()
        return StageOutputs(deduped.good, dead, done=read.done, aliases=deduped.aliases, skipped=read.skipped)

    def _rendered_only(self, pbegin):
        rendered = self._rendered if self._rendered is not None else pbegin | "NoRendered" >> beam.Create([])
        grouped = (
            rendered
            | "KeyByContent" >> beam.Map(lambda s: (_dedup_key(s), s))
            | "GroupDuplicates" >> beam.GroupByKey()
        )
        deduped = self.apply_fn(grouped, "Collapse", _CollapseDuplicates(self._config.run_id), ALIASES)
        done = pbegin | "NoDone" >> beam.Create([])
        skipped = pbegin | "NoSkipped" >> beam.Create([])
        return StageOutputs(deduped.good, deduped.dead_letter, done=done, aliases=deduped.aliases, skipped=skipped)
