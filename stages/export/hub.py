"""Export a screenmill output root as a Hugging Face dataset repository: to the Hub, or into a local folder.

Repository layout (the same for an upload and for ``--local-dir``)::

    README.md                                        dataset card: YAML metadata (configs, features, license,
                                                     counts, sources, annotators, review coverage, runs) + text
    data/<config>/<split>-<batch>-<chunk>.parquet    the rows; ``<batch>`` = ``<sequence>-<content hash>``
    _screenmill/index.parquet                        one row per exported row: config, key, split, file + card facts
    _screenmill/state.json                           split settings, runs, sources, batches, per-file counts

Configs: ``screenshots`` (one row per ``screenshot_id``, the image as a ``datasets.Image`` feature), ``steps`` (one
row per episode step: the occurrence of a screenshot in an episode, with the episode's task and recorded action, and
for an explored page the page and how it was shown at that step: ``page_uri``, ``page_sha256``, ``render``),
``grounding``, ``actions`` and ``reviewed`` (the tables of :mod:`screenmill.schemas.records`; joined to the images by
``screenshot_id``). Every Parquet file carries the ``huggingface`` features metadata, so ``datasets`` decodes images.

Splits are decided by a stable hash of the episode (or of the screenshot outside episodes), salted with ``seed``:
a row's split never changes between exports, and an episode is never split. Grounding and review rows follow the
split of their screenshot; a screenshot seen in several episodes follows the first of them (by ``episode_id``).

Incremental: the index says which rows are already in the repository; an export writes only the other rows, into
new files, and rewrites nothing but the card, the index and the state. Same inputs and same repository, same file
names and bytes, so a retried export repeats itself instead of adding copies.

Bad input: a screenshot whose image is gone (``missing_image``) or whose bytes no longer hash to its id
(``changed_since_run``) is not exported, nor is anything that depends on it (its labels, reviews, and the steps and
actions of its episode: ``held_back``); rows whose screenshot or label is unknown are ``missing_screenshot`` /
``missing_label``. All of them are in :attr:`ExportResult.dead_letters` (:class:`screenmill.schemas.records.DeadLetter`
records, ``stage`` ``export/<config>``, ``input_id`` the row's key); a later export picks held-back rows up once the
image is back. Images are read with :func:`screenmill.schemas.verified.read_verified` (size-bounded, sha256-checked);
its ``changed_during_run`` is reported as ``changed_since_run``, the name the export has always used.

``datasets`` and ``huggingface_hub`` are imported when needed (``pip install 'screenmill[hub]'``).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import json
import os
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from apache_beam.io.filesystems import FileSystems
from screenmill.schemas import tables
from screenmill.schemas.images import ImageRejected
from screenmill.schemas.keys import stable_id
from screenmill.schemas.records import SCHEMA_VERSION, DeadLetter, utcnow
from screenmill.schemas.tables import read_shards
from screenmill.schemas.verified import read_verified
from screenmill.stages.clients.retry import retry_call
from screenmill.stages.export.card import render_card, run_provenance
from screenmill.stages.export.config import ExportConfig
from screenmill.stages.export.repo import (
    CONFIGS,
    INDEX_META,
    INDEX_PATH,
    INDEX_REVIEW,
    INDEX_SCHEMA,
    README_PATH,
    SHOT_ONLY,
    SPLITS,
    STATE_FORMAT,
    STATE_PATH,
    ExportError,
    Previous,
    export_features,
    export_schema,
    import_optional,
    load_previous,
    local_files,
    row_key,
)

TOKEN_VARS = ("HF_TOKEN", "HUGGINGFACE_HUB_TOKEN")
_EXT = {"PNG": "png", "JPEG": "jpg", "WEBP": "webp"}


def split_of(unit: str, test_fraction: float, seed: str = "") -> str:
    """``train`` or ``test`` for a split unit (an episode id or a screenshot id): a stable salted hash, any machine."""
    digest = hashlib.sha256(f"{seed}\x1f{unit}".encode()).digest()
    return "test" if int.from_bytes(digest[:8], "big") / 2**64 < test_fraction else "train"


def read_manifests(output: str) -> tuple[list[dict[str, Any]], list[DeadLetter]]:
    """The run manifests (:func:`screenmill.schemas.tables.read_manifests`), by run id, and a dead letter for each bad
    one."""
    manifests, bad = tables.read_manifests(output)
    return manifests, [_dead("runs", path, "bad_manifest", error, path) for path, error in bad]


STAGE = "export"


def _dead(config: str, key: str, reason: str, error: str, payload_ref: str) -> DeadLetter:
    """A row of ``config`` (its index ``key``) that is not exported: stage ``export/<config>``, no run id."""
    return DeadLetter(key, f"{STAGE}/{config}", reason, error, payload_ref, "", utcnow())


def dead_config(letter: DeadLetter) -> str:
    """The config of an export dead letter (``screenshots``, ``grounding`` …, ``runs`` for a bad manifest)."""
    return letter.stage.removeprefix(f"{STAGE}/")


def read_image(screenshot_id: str, byte_size: int, uris: Iterable[str]) -> tuple[bytes | None, DeadLetter | None]:
    """The bytes of a screenshot from the first of its files that still has its size and hashes to its id.

    Returns:
        ``(bytes, None)``, or ``(None, dead letter)`` with reason ``missing_image`` (no file could be read) or
        ``changed_since_run`` (a file was read but its size or sha256 is another; the last such file is named).
    """
    uris = sorted(set(uris))
    reason, error, ref = "missing_image", "no file of this screenshot can be read", uris[0]
    for uri in uris:
        try:
            return read_verified(uri, screenshot_id, byte_size), None
        except OSError as e:
            if reason == "missing_image":
                error = f"{type(e).__name__}: {e}"
        except ImageRejected as e:  # changed_during_run
            reason, error, ref = "changed_since_run", e.message, uri
    return None, _dead("screenshots", screenshot_id, reason, error, ref)


class _FileWriter:
    """One config's new rows → ``data/<config>/<split>-<batch>-<chunk>.parquet`` files under ``dest``, + index rows.

    Rows must come in key order; a file is cut when it holds ``max_rows`` rows or ``max_bytes`` payload bytes.
    Each file is written under a temporary name and renamed into place.
    """

    def __init__(self, dest: str, config: str, batch: str, cfg: ExportConfig):
        self._dest, self._config, self._batch, self._cfg = dest, config, batch, cfg
        self._schema = export_features(config).arrow_schema
        self._buffers: dict[str, list[tuple[dict, dict]]] = defaultdict(list)
        self._bytes: Counter[str] = Counter()
        self._chunks: Counter[str] = Counter()
        self.files: dict[str, dict[str, Any]] = {}
        self.index: list[dict[str, Any]] = []

    def add(self, split: str, row: dict[str, Any], payload_bytes: int = 0) -> None:
        self._buffers[split].append((row, {m: row.get(m) for m in INDEX_META + INDEX_REVIEW}))
        self._bytes[split] += payload_bytes
        if len(self._buffers[split]) >= self._cfg.max_file_rows or self._bytes[split] >= self._cfg.max_file_bytes:
            self._flush(split)

    def close(self) -> None:
        for split in sorted(self._buffers):
            self._flush(split)

    def _flush(self, split: str) -> None:
        rows = self._buffers.pop(split, [])
        self._bytes[split] = 0
        if not rows:
            return
        path = f"data/{self._config}/{split}-{self._batch}-{self._chunks[split]:05d}.parquet"
        self._chunks[split] += 1
        table = pa.Table.from_pylist([r for r, _ in rows], schema=self._schema)
        group = 100 if self._config == "screenshots" else 10_000
        size = _write_file(
            self._dest, path, lambda f: pq.write_table(table, f, row_group_size=group, compression="zstd")
        )
        self.files[path] = {
            "config": self._config,
            "split": split,
            "rows": table.num_rows,
            "num_bytes": table.nbytes,
            "size": size,
        }
        for row, meta in rows:
            self.index.append(
                {"config": self._config, "key": row_key(self._config, row), "split": split, "file": path, **meta}
            )


def _write_file(dest: str, path: str, write: Callable[[Any], None]) -> int:
    """``write(file)`` into ``dest/path`` through a temporary name; returns the file's size."""
    target = os.path.join(dest, *path.split("/"))
    os.makedirs(os.path.dirname(target), exist_ok=True)
    tmp = os.path.join(os.path.dirname(target), f".{os.path.basename(target)}.tmp")
    with open(tmp, "wb") as f:
        write(f)
    os.replace(tmp, target)
    return os.path.getsize(target)


def _new_rows(config: str, rows: Iterable[dict[str, Any]], done: set[str]) -> list[tuple[str, dict[str, Any]]]:
    """``(key, row)`` of the rows not exported yet, one per key (the earliest run's), in key order."""
    first: dict[str, dict[str, Any]] = {}
    for row in sorted(rows, key=lambda r: r["run_id"]):
        first.setdefault(row_key(config, row), row)
    return sorted(((k, r) for k, r in first.items() if k not in done), key=lambda kr: kr[0])


@dataclasses.dataclass(frozen=True)
class ExportResult:
    """What one export did.

    Attributes:
        batch: the batch id of the new files (``<sequence>-<content hash>``).
        added: the new data files (repository paths).
        written: every path written this time (data files + card + index + state); empty when nothing changed.
        new_rows / total_rows: ``{config: {split: rows}}`` of this export and of the whole repository after it.
        dead_letters: one :class:`DeadLetter` per row not exported (:func:`dead_config` tells its config).
        target: where it went (``hf://datasets/ORG/NAME`` or the local folder).
        commit_url: the Hub commit, when one was made.
    """

    batch: str
    added: list[str]
    written: list[str]
    new_rows: dict[str, dict[str, int]]
    total_rows: dict[str, dict[str, int]]
    dead_letters: list[DeadLetter]
    target: str = ""
    commit_url: str | None = None

    @property
    def changed(self) -> bool:
        """Whether the repository changed (False: nothing new, nothing written, nothing to commit)."""
        return bool(self.written)


def build_export(cfg: ExportConfig, previous: Previous, dest: str) -> ExportResult:
    """Write the new rows of ``cfg.output`` as new files under ``dest``, then the card, the index and the state.

    Args:
        cfg: the export settings.
        previous: what the repository already holds (:func:`load_previous`).
        dest: a local folder: the repository itself (``--local-dir``) or a staging folder for the upload.

    Returns:
        The :class:`ExportResult`; nothing is written when there is nothing new and the card would not change.

    Raises:
        ExportError: the repository was split with other settings (``test_fraction`` / ``seed``).
        ImportError: ``datasets`` is not installed.
    """
    old_split = previous.state.get("split")
    if old_split is not None and old_split != cfg.split_settings:
        raise ExportError(f"the repository was split with {old_split}; export with the same --test-fraction/--seed")
    tables = {
        t: read_shards(cfg.output, t, cfg.dt).to_pylist() for t in ("screenshots", "grounding", "actions", "reviewed")
    }
    manifests, dead = read_manifests(cfg.output)
    plan = _Plan(cfg, previous, tables)
    batch = f"{len(previous.state.get('batches', [])) + 1:05d}-{plan.content_hash()}"
    writers = {c: _FileWriter(dest, c, batch, cfg) for c in CONFIGS}
    dead += plan.write(writers)
    for writer in writers.values():
        writer.close()
    return _finish(cfg, previous, dest, batch, writers, manifests, dead)


class _Plan:
    """Which rows are new, which split each goes to, and which must wait (dead image, unknown screenshot/label)."""

    def __init__(self, cfg: ExportConfig, previous: Previous, tables: dict[str, list[dict[str, Any]]]):
        self._cfg = cfg
        self._done: dict[str, dict[str, str]] = defaultdict(dict)  # config -> key -> split
        for entry in previous.index.select(["config", "key", "split"]).to_pylist():
            self._done[entry["config"]][entry["key"]] = entry["split"]
        self._shots: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self._episodes: dict[str, set[str]] = defaultdict(set)
        for row in tables["screenshots"]:
            self._shots[row["screenshot_id"]].append(row)
            if row["episode_id"]:
                self._episodes[row["episode_id"]].add(row["screenshot_id"])
        self._shot_split = dict(self._done["screenshots"])  # exported screenshots keep their split
        for sid, rows in self._shots.items():
            in_episodes = sorted({r["episode_id"] for r in rows if r["episode_id"]})
            self._shot_split.setdefault(sid, self.split(in_episodes[0] if in_episodes else sid))
        self._label_split = dict(self._done["grounding"])
        self._lost: dict[str, str] = {}  # screenshot id -> why it is not exported
        self._lost_episodes: dict[str, str] = {}  # episode -> one of its lost screenshots
        step_rows = (r for r in tables["screenshots"] if r["episode_id"])
        self.new = {
            "screenshots": _new_rows("screenshots", tables["screenshots"], set(self._done["screenshots"])),
            "steps": _new_rows("steps", step_rows, set(self._done["steps"])),
            **{c: _new_rows(c, tables[c], set(self._done[c])) for c in ("grounding", "actions", "reviewed")},
        }

    def split(self, unit: str) -> str:
        return split_of(unit, self._cfg.test_fraction, self._cfg.seed)

    def content_hash(self) -> str:
        """8 hex of the keys of every new row: the same new rows, the same batch name."""
        return stable_id({c: [k for k, _ in rows] for c, rows in self.new.items()})[:8]

    def write(self, writers: dict[str, _FileWriter]) -> list[dict[str, str]]:
        """Feed every exportable new row to its config's writer; return the dead letters of the others."""
        dead = []
        for sid, row in self.new["screenshots"]:
            data, letter = read_image(sid, row["byte_size"], (r["source_uri"] for r in self._shots[sid]))
            if letter is not None:
                dead.append(letter)
                self._lost[sid] = letter.reason
                continue
            out = {k: v for k, v in row.items() if k not in SHOT_ONLY}
            out["image"] = {"bytes": data, "path": f"{sid}.{_EXT.get(row['format'], 'img')}"}
            writers["screenshots"].add(self._shot_split[sid], out, len(data))
        for episode, sids in sorted(self._episodes.items()):
            if sids & self._lost.keys():
                self._lost_episodes[episode] = min(sids & self._lost.keys())
        columns = export_schema("steps").names
        for key, row in self.new["steps"]:
            if not self._blocked(dead, "steps", key, row["screenshot_id"], row["episode_id"]):
                writers["steps"].add(self.split(row["episode_id"]), {c: row[c] for c in columns})
        for key, row in self.new["grounding"]:
            if not self._blocked(dead, "grounding", key, row["screenshot_id"]):
                self._label_split[key] = self._shot_split[row["screenshot_id"]]
                writers["grounding"].add(self._label_split[key], row)
        for key, row in self.new["actions"]:
            if not self._blocked(dead, "actions", key, row["screenshot_id"], row["episode_id"]):
                writers["actions"].add(self.split(row["episode_id"]), row)
        held_labels = {d.input_id for d in dead if dead_config(d) == "grounding"}
        for key, row in self.new["reviewed"]:
            label = row["label_id"]
            if label in self._label_split:  # a review follows its label
                writers["reviewed"].add(self._label_split[label], row)
            elif label in held_labels or row["screenshot_id"] in self._lost:
                dead.append(_dead("reviewed", key, "held_back", f"label {label} is not exported", label))
            else:
                dead.append(_dead("reviewed", key, "missing_label", f"label {label} is in no grounding table", label))
        return dead

    def _blocked(self, dead: list, config: str, key: str, sid: str | None, episode: str | None = None) -> bool:
        """Append a dead letter and return True when the row's screenshot or episode cannot be exported."""
        if episode in self._lost_episodes:
            lost = self._lost_episodes[episode]
            dead.append(
                _dead(config, key, "held_back", f"screenshot {lost} of episode {episode} is not exported", lost)
            )
        elif sid is not None and sid in self._lost:
            dead.append(_dead(config, key, "held_back", f"screenshot {sid} is not exported ({self._lost[sid]})", sid))
        elif sid is not None and sid not in self._shot_split:
            dead.append(_dead(config, key, "missing_screenshot", f"screenshot {sid} is in no screenshots table", sid))
        else:
            return False
        return True


def _finish(cfg, previous, dest, batch, writers, manifests, dead) -> ExportResult:
    """Merge the new files into the index and state, write them and the card when anything changed."""
    files = {p: f for w in writers.values() for p, f in w.files.items()}
    index_rows = [r for w in writers.values() for r in w.index]
    state = {
        "format": STATE_FORMAT,
        "schema_version": SCHEMA_VERSION,
        "split": cfg.split_settings,
        "license": cfg.license,
        "name": cfg.name,
        "pretty_name": cfg.pretty_name or cfg.name.split("/")[-1],
        "sources": sorted(set(previous.state.get("sources", [])) | {m["input"] for m in manifests if m.get("input")}),
        "runs": {**previous.state.get("runs", {}), **{m["run_id"]: run_provenance(m) for m in manifests}},
        "batches": previous.state.get("batches", []),
        "files": {**previous.state.get("files", {}), **files},
    }
    if files:
        rows = _counts(files)
        state["batches"] = state["batches"] + [{"batch": batch, "rows": rows, "files": sorted(files)}]
    state = json.loads(json.dumps(state, sort_keys=True))
    written: list[str] = []
    if files or state != previous.state:
        index = pa.concat_tables([previous.index, pa.Table.from_pylist(index_rows, schema=INDEX_SCHEMA)])
        index = index.sort_by([("config", "ascending"), ("key", "ascending")])
        _write_file(dest, INDEX_PATH, lambda f: pq.write_table(index, f, compression="zstd"))
        _write_file(dest, STATE_PATH, lambda f: f.write(json.dumps(state, indent=1, sort_keys=True).encode()))
        card = render_card(state, index)
        _write_file(dest, README_PATH, lambda f: f.write(card.encode("utf-8")))
        written = sorted(files) + [README_PATH, INDEX_PATH, STATE_PATH]
    target = cfg.local_dir if cfg.local_dir else f"hf://datasets/{cfg.repo_id}"
    return ExportResult(batch, sorted(files), written, _counts(files), _counts(state["files"]), dead, target)


def _counts(files: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {}
    for f in files.values():
        per = counts.setdefault(f["config"], {})
        per[f["split"]] = per.get(f["split"], 0) + f["rows"]
    return counts


def export_to_local(cfg: ExportConfig) -> ExportResult:
    """Export into ``cfg.local_dir``: exactly the repository an upload would make, grown in place.

    Raises:
        ExportError, ImportError: as :func:`build_export`.
    """
    os.makedirs(cfg.local_dir, exist_ok=True)

    def read(path: str) -> bytes:
        with open(os.path.join(cfg.local_dir, *path.split("/")), "rb") as f:
            return f.read()

    return build_export(cfg, load_previous(local_files(cfg.local_dir), read), cfg.local_dir)


def token_from_env(env: Mapping[str, str] | None = None) -> str:
    """The Hub token from ``HF_TOKEN`` or ``HUGGINGFACE_HUB_TOKEN``.

    Raises:
        ExportError: neither is set (the message names them, never a value).
    """
    env = os.environ if env is None else env
    for var in TOKEN_VARS:
        if env.get(var, "").strip():
            return env[var].strip()
    raise ExportError(f"set {' or '.join(TOKEN_VARS)} to a Hub token with write access")


class HubRepo:
    """The few Hub calls an export makes on one dataset repository, each through :func:`retry_call`.

    Raises (every method):
        GaveUp: the Hub kept failing transiently.
        huggingface_hub.errors.HfHubHTTPError: a non-transient error (401, 403, 404…), at once.
    """

    def __init__(self, repo_id: str, token: str, *, attempts: int = 5, sleep: Callable[[float], None] = time.sleep):
        hub = import_optional("huggingface_hub")
        self.repo_id = repo_id
        self._api = hub.HfApi(token=token, library_name="screenmill")
        self._attempts, self._sleep = attempts, sleep

    def _call(self, what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return retry_call(
            fn,
            *args,
            what=f"{what} {self.repo_id}",
            attempts=self._attempts,
            sleep=self._sleep,
            repo_type="dataset",
            **kwargs,
        )

    def files(self, private: bool) -> list[str]:
        """Create the repository if needed and list its files."""
        self._call("create_repo", self._api.create_repo, self.repo_id, exist_ok=True, private=private)
        return self._call("list_repo_files", self._api.list_repo_files, self.repo_id)

    def read(self, path: str, into: str) -> bytes:
        """Download one file of the repository into the folder ``into``; return its bytes."""
        local = self._call("hf_hub_download", self._api.hf_hub_download, self.repo_id, path, local_dir=into)
        with open(local, "rb") as f:
            return f.read()

    def commit(self, staging: str, paths: list[str], message: str) -> str:
        """One commit adding ``paths`` (read from ``staging``); returns the commit URL."""
        hub = import_optional("huggingface_hub")
        ops = [
            hub.CommitOperationAdd(path_in_repo=p, path_or_fileobj=os.path.join(staging, *p.split("/"))) for p in paths
        ]
        info = self._call(
            "create_commit", self._api.create_commit, self.repo_id, operations=ops, commit_message=message
        )
        return str(getattr(info, "commit_url", info))


def commit_message(result: ExportResult) -> str:
    """``screenmill export <batch>: +N screenshots, +M grounding, …`` (only what this export adds)."""
    added = ", ".join(f"+{sum(v.values())} {c}" for c, v in result.new_rows.items()) or "card update"
    return f"screenmill export {result.batch}: {added}"


def export_to_hub(cfg: ExportConfig, repo: HubRepo) -> ExportResult:
    """Export to the Hub: learn what the repository holds, stage the new files, upload them in one commit.

    Args:
        cfg: the settings (``repo_id`` set, ``local_dir`` not).
        repo: the client (:class:`HubRepo`; its token comes from :func:`token_from_env`).

    Returns:
        The result, with ``commit_url`` set when a commit was made (none when nothing changed).

    Raises:
        ExportError, ImportError: as :func:`build_export`; GaveUp / HfHubHTTPError: as :class:`HubRepo`.
    """
    with tempfile.TemporaryDirectory(prefix="screenmill-export-") as tmp:
        download, staging = os.path.join(tmp, "previous"), os.path.join(tmp, "staging")
        previous = load_previous(repo.files(cfg.private), lambda path: repo.read(path, download))
        result = build_export(cfg, previous, staging)
        if not result.changed:
            return result
        return dataclasses.replace(result, commit_url=repo.commit(staging, result.written, commit_message(result)))


def format_summary(result: ExportResult, most: int = 20) -> str:
    """What a person reads after an export: rows added / in total per config and split, dead letters by reason."""
    lines = [f"screenmill export {result.batch} -> {result.target}"]
    lines.append(f"  {'config':<12} {'split':<6} {'new':>8} {'total':>8}")
    for config in CONFIGS:
        for split in SPLITS:
            total = result.total_rows.get(config, {}).get(split)
            if total is not None:
                lines.append(
                    f"  {config:<12} {split:<6} {result.new_rows.get(config, {}).get(split, 0):>8} {total:>8}"
                )
    by_reason = Counter((dead_config(d), d.reason) for d in result.dead_letters)
    if by_reason:
        lines.append("not exported: " + ", ".join(f"{c}/{r}={n}" for (c, r), n in sorted(by_reason.items())))
        shown = [d for d in result.dead_letters if d.reason != "held_back"]
        lines += [f"  {d.reason:<18} {dead_config(d):<12} {d.input_id}  {d.error}" for d in shown[:most]]
        if len(shown) > most:
            lines.append(f"  … {len(shown) - most} more in the report")
    if not result.changed:
        lines.append("nothing new: the repository is up to date")
    else:
        lines.append(f"files added: {len(result.added)}; card, index and state rewritten")
    if result.commit_url:
        lines.append(f"commit: {result.commit_url}")
    return "\n".join(lines)


def write_report(output: str, result: ExportResult, now: _dt.datetime | None = None) -> str:
    """Write ``OUT/_export/export-<UTC stamp>-<batch>.json`` (result + every dead letter) and return its path."""
    stamp = (now or _dt.datetime.now(_dt.UTC)).strftime("%Y%m%dT%H%M%SZ")
    path = tables.report_path(output, "export", f"export-{stamp}-{result.batch}.json")
    with FileSystems.create(path) as f:
        report = {**dataclasses.asdict(result), "dead_letters": [d.to_json_row() for d in result.dead_letters]}
        f.write(json.dumps(report, indent=2, sort_keys=True).encode("utf-8"))
    return path
