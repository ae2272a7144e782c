"""``GuardBenchmarkLeakage``: refuse (or flag) screenshots that look like a benchmark's images, so test screenshots
never leak into training data.

Each screenshot's pixels are re-read (and checked against the content hash, as every stage does) and its perceptual
hash (:func:`screenmill.schemas.phash.phash`) compared with every benchmark hash; a match is a benchmark hash at most
``max_distance`` bits away. The benchmark is a folder of images, hashed once per worker process in ``setup()``, or
a text file of hashes (``screenmill leakage-hashes``), the better choice for large benchmarks and distributed runs.

Modes: ``refuse`` dead-letters a match (reason ``benchmark_leak``); ``flag`` forwards it and also emits a dead-letter
record with reason ``benchmark_leak_flagged`` (written and counted with the other dead letters; counters
``forwarded`` and ``flagged_benchmark_leak``, not ``dropped_…``). Other reason codes: ``unreadable``,
``changed_during_run`` and any :mod:`screenmill.schemas.images` reason (pixels that do not decode).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable

import numpy as np
from apache_beam.io.filesystem import CompressionTypes
from apache_beam.io.filesystems import FileSystems
from apache_beam.utils import shared
from screenmill.schemas.images import ImageLimits, ImageRejected, load_rgb
from screenmill.schemas.phash import from_hex, phash, to_hex
from screenmill.schemas.records import Screenshot
from screenmill.schemas.verified import read_screenshot
from screenmill.stages.base import Failure, Stage, StageDoFn
from screenmill.stages.ingest import IMAGE_EXTENSIONS

STAGE = "guard"
MODES = ("refuse", "flag")
DEFAULT_MAX_DISTANCE = 4
DEFAULT_LIMITS = ImageLimits()


def _read_bytes(path: str) -> bytes:
    with FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED) as f:
        return f.read()


def _is_dir(path: str) -> bool:
    return FileSystems.get_scheme(path) in (None, "file") and os.path.isdir(path.removeprefix("file://"))


def _no_images(directory: str) -> str:
    return f"no benchmark images ({' '.join(IMAGE_EXTENSIONS)}) under {directory}"


def image_files(directory: str) -> list[str]:
    """The benchmark images below a local ``directory`` (recursive; ``.png`` ``.jpg`` ``.jpeg`` ``.webp``), as sorted
    POSIX paths relative to it. Other files (READMEs, annotations) are not benchmark images and are skipped."""
    root = directory.removeprefix("file://")
    found = []
    for parent, dirs, files in os.walk(root):
        dirs.sort()
        for name in files:
            if name.lower().endswith(IMAGE_EXTENSIONS):
                found.append(os.path.relpath(os.path.join(parent, name), root).replace(os.sep, "/"))
    return sorted(found)


def hash_image_dir(
    directory: str,
    limits: ImageLimits = DEFAULT_LIMITS,
    on_error: Callable[[str, Exception], None] | None = None,
) -> list[tuple[str, int]]:
    """pHash every benchmark image below a local ``directory`` (decoded the way screenshots are: EXIF-oriented RGB).

    Args:
        directory: a local folder.
        limits: image limits applied when decoding.
        on_error: called with (relative name, error) for an image that cannot be read or decoded, which is then
            skipped; None raises instead.

    Returns:
        ``[(relative name, hash)]`` sorted by name.

    Raises:
        ValueError: an image cannot be read or decoded (without ``on_error``).
    """
    hashes = []
    for name in image_files(directory):
        path = os.path.join(directory.removeprefix("file://"), name)
        try:
            hashes.append((name, phash(load_rgb(_read_bytes(path), limits))))
        except (OSError, ValueError) as e:  # ImageRejected is a ValueError
            if on_error is None:
                raise ValueError(f"benchmark image {path} cannot be hashed: {e}") from e
            on_error(name, e)
    return hashes


def parse_hash_lines(text: str, source: str = "<hash list>") -> list[tuple[str, int]]:
    """Parse a hash list: ``<16 hex digits> [name]`` per line; blank lines and ``#`` comment lines are skipped.

    A line without a name is named ``<source>:<line number>``.

    Raises:
        ValueError: a line whose first word is not a 16-hex-digit hash (the message names the line).
    """
    hashes = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        word, _, name = line.partition(" ")
        try:
            value = from_hex(word)
        except ValueError as e:
            raise ValueError(f"{source}:{number}: {e} (expected '<16 hex digits>  <name>')") from None
        hashes.append((name.strip() or f"{source}:{number}", value))
    return hashes


def load_benchmark_hashes(path: str, limits: ImageLimits = DEFAULT_LIMITS) -> list[tuple[str, int]]:
    """The benchmark's perceptual hashes: a local folder of images is hashed, any other path read as a hash list.

    Args:
        path: a local folder of images, or a hash-list file (local or any Beam FileSystems URI) in the format
            :func:`parse_hash_lines` reads and ``screenmill leakage-hashes`` writes.
        limits: image limits used when hashing a folder's images.

    Returns:
        ``[(name, hash)]``: relative image path or the name on the hash line.

    Raises:
        ValueError: the path does not exist, a hash line is malformed, an image cannot be hashed, or there is no
            hash at all (a guard against nothing is a misconfiguration).
    """
    if _is_dir(path):
        hashes = hash_image_dir(path, limits)
        what = _no_images(path)
    else:
        if not FileSystems.exists(path):
            raise ValueError(f"benchmark {path!r} does not exist (a local folder of images or a file of hashes)")
        try:
            text = _read_bytes(path).decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"benchmark {path!r} is not a text file of hashes (nor a folder of images)") from None
        hashes = parse_hash_lines(text, path)
        what = f"no hashes in {path}"
    if not hashes:
        raise ValueError(what)
    return hashes


@dataclasses.dataclass(frozen=True)
class GuardConfig:
    """What counts as a benchmark image and what happens to a screenshot that looks like one.

    Attributes:
        benchmark: a local folder of benchmark images (hashed in each worker's ``setup()``; the folder must be
            readable where the workers run) or a hash-list file, local or ``gs://`` etc. (``screenmill
            leakage-hashes``). Checked when the config is made: a missing path, a folder without images or a
            malformed hash line raise ``ValueError`` before any pipeline starts.
        run_id: the run's id (stamped on dead letters).
        max_distance: a benchmark hash at most this many bits away (Hamming, of 63) is a match. The default 4 holds
            JPEG re-encodes down to q30 and rescales (measured 0-4) while the closest pair of visually different
            real screenshots measured is 6 apart (see :mod:`screenmill.schemas.phash`); raise it to catch crops, at the
            cost of flagging look-alike screens.
        mode: ``refuse`` (dead-letter matches) or ``flag`` (forward them and record a flag in the dead letters).
        limits: image limits used when pixels are decoded.
    """

    benchmark: str
    run_id: str
    max_distance: int = DEFAULT_MAX_DISTANCE
    mode: str = "refuse"
    limits: ImageLimits = DEFAULT_LIMITS

    def __post_init__(self):
        if not self.run_id:
            raise ValueError("GuardConfig.run_id must be set")
        if not self.benchmark or not isinstance(self.benchmark, str):
            raise ValueError("GuardConfig.benchmark must be a folder of images or a file of hashes")
        if self.mode not in MODES:
            raise ValueError(f"GuardConfig.mode {self.mode!r} is not one of {MODES}")
        if isinstance(self.max_distance, bool) or not isinstance(self.max_distance, int):
            raise ValueError(f"GuardConfig.max_distance must be an int, got {self.max_distance!r}")
        if not 0 <= self.max_distance < 32:
            raise ValueError(f"GuardConfig.max_distance must be in 0..31 (of 63 bits), got {self.max_distance}")
        if _is_dir(self.benchmark):
            if not image_files(self.benchmark):
                raise ValueError(f"GuardConfig.benchmark: {_no_images(self.benchmark)}")
        else:
            load_benchmark_hashes(self.benchmark)  # parses the list now: fail before the run, not on a worker


class BenchmarkIndex:
    """The benchmark hashes of one worker; :meth:`nearest` finds the closest one to a screenshot's hash."""

    def __init__(self, hashes: list[tuple[str, int]]):
        self.names = [name for name, _ in hashes]
        self._hashes = np.array([value for _, value in hashes], dtype=np.uint64)

    def __len__(self) -> int:
        return len(self.names)

    def nearest(self, value: int) -> tuple[int, str, int]:
        """``(distance, name, hash)`` of the benchmark hash closest to ``value`` (the first such on a tie)."""
        xor = self._hashes ^ np.uint64(value)
        distances = np.unpackbits(xor.view(np.uint8).reshape(-1, 8), axis=1).sum(axis=1)
        best = int(np.argmin(distances))
        return int(distances[best]), self.names[best], int(self._hashes[best])


class _Guard(StageDoFn):
    stage = STAGE

    def __init__(self, config: GuardConfig, shared_handle: shared.Shared):
        super().__init__(config.run_id)
        self._config = config
        self._shared = shared_handle

    def start(self):
        config = self._config

        def load() -> BenchmarkIndex:
            return BenchmarkIndex(load_benchmark_hashes(config.benchmark, config.limits))

        # One index per worker process, however many DoFn instances it runs (a folder is hashed once).
        self._index = self._shared.acquire(load, tag=repr((config.benchmark, config.limits)))

    def handle(self, shot: Screenshot):
        config = self._config
        uri = shot.source_uri
        try:
            value = phash(read_screenshot(shot, config.limits))
        except ImageRejected as e:
            yield Failure(uri, e.reason, e.message, uri)
            return
        except Exception as e:  # noqa: BLE001 - unreadable input is this item's failure only
            yield Failure(uri, "unreadable", f"{type(e).__name__}: {e}", uri)
            return
        distance, name, matched = self._index.nearest(value)
        if distance <= config.max_distance:
            error = (
                f"looks like benchmark image {name!r} (pHash {to_hex(matched)}): Hamming distance "
                f"{distance} <= {config.max_distance}; this screenshot's pHash is {to_hex(value)}"
            )
            if config.mode == "refuse":
                yield Failure(uri, "benchmark_leak", error, uri)
                return
            # a flag, not a drop: counted as flagged_benchmark_leak and forwarded
            yield Failure(uri, "benchmark_leak_flagged", error, uri, flag="flagged_benchmark_leak")
        yield shot


class GuardBenchmarkLeakage(Stage):
    """Screenshots → the screenshots that do not look like a benchmark image + dead letters (stage ``guard``).

    Usage: ``shots, dead = screenshots | "Guard" >> GuardBenchmarkLeakage(GuardConfig(benchmark, run_id))``.
    """

    def __init__(self, config: GuardConfig):
        super().__init__()
        self._config = config

    def expand(self, shots):
        return self.apply_fn(shots, "Match", _Guard(self._config, shared.Shared()))
