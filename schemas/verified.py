"""The one way a screenshot's bytes are read back from their file: size-bounded and checked against the content id.

Images never travel through the pipeline; whoever needs them again (the annotators, the Hub export, the benchmark
converters) reads them here. At most ``byte_size + 1`` bytes are read, so a file swapped for a bigger one (or a link
to ``/dev/zero``) is never read whole, and the bytes must hash (sha256) to the ``screenshot_id`` the run recorded.

Reason code: ``changed_during_run`` (:data:`CHANGED`): the file no longer has the recorded size or bytes. A file
that cannot be read at all raises the filesystem's own error (an ``OSError`` for local files); callers name that.
"""

from __future__ import annotations

import hashlib

from screenmill.schemas.images import ImageLimits, ImageRejected, load_rgb
from screenmill.schemas.records import Screenshot

CHANGED = "changed_during_run"


def read_verified(uri: str, screenshot_id: str, byte_size: int) -> bytes:
    """The bytes of the file at ``uri``, if they are still the ones the run recorded.

    Args:
        uri: the file (a local path or any Beam FileSystems URI).
        screenshot_id: the sha256 (hex) the bytes must have.
        byte_size: the size they must have; at most ``byte_size + 1`` bytes are read.

    Returns:
        The file's bytes.

    Raises:
        ImageRejected: ``changed_during_run`` when the size or the sha256 differs.
        OSError: the file cannot be opened or read (other filesystems may raise their own errors).
    """
    from apache_beam.io.filesystem import CompressionTypes
    from apache_beam.io.filesystems import FileSystems

    with FileSystems.open(uri, compression_type=CompressionTypes.UNCOMPRESSED) as f:
        data = f.read(byte_size + 1)  # bounded: a file swapped for a bigger one (or /dev/zero) is not read whole
    if len(data) != byte_size:
        raise ImageRejected(CHANGED, f"{uri} is no longer {byte_size} bytes long: its bytes no longer match its id")
    digest = hashlib.sha256(data).hexdigest()
    if digest != screenshot_id:
        raise ImageRejected(CHANGED, f"{uri} now hashes to {digest[:16]}…, not {screenshot_id[:16]}…")
    return data


def read_screenshot(shot: Screenshot, limits: ImageLimits):
    """Re-read a screenshot's pixels from its URI as the RGB frame its coordinates refer to.

    Returns:
        A Pillow RGB image (EXIF orientation applied).

    Raises:
        ImageRejected: ``changed_during_run`` as :func:`read_verified`, or any :mod:`screenmill.schemas.images` reason
        when the
            pixels do not decode.
        OSError: the file cannot be read.
    """
    return load_rgb(read_verified(shot.source_uri, shot.screenshot_id, shot.byte_size), limits)
