"""The retry helper under faults: transient ones (connection errors, timeouts, 429 / 5xx) are retried to success,
permanent ones (4xx, bugs) raise at once, a lasting outage ends in ``GaveUp``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable


@dataclasses.dataclass
class RetryResult:
    transient: int = 0
    survived: int = 0
    permanent: int = 0
    not_retried: int = 0
    outage_gave_up: bool = False
    failures: list[str] = dataclasses.field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.survived == self.transient and self.not_retried == self.permanent and self.outage_gave_up


class _Status(Exception):
    def __init__(self, status: int):
        super().__init__(f"HTTP {status}")
        self.status_code = status


class TransportError(Exception):
    """Named like httpx's: the retry helper recognises transport failures by class name."""


def run_retry() -> RetryResult:
    """Transient faults are retried to success, permanent ones raise at once, an outage ends in ``GaveUp``."""
    from screenmill.stages.clients.retry import GaveUp, retry_call

    res = RetryResult()
    transient: list[Callable[[], Exception]] = [
        lambda: ConnectionRefusedError("refused"),
        lambda: ConnectionResetError("reset"),
        lambda: TimeoutError("timed out"),
        lambda: TransportError("connect failed"),
    ] + [lambda s=s: _Status(s) for s in (408, 429, 500, 502, 503, 504)]
    permanent: list[Callable[[], Exception]] = [lambda s=s: _Status(s) for s in (400, 401, 403, 404, 422)] + [
        lambda: ValueError("a bug"),
        lambda: KeyError("missing"),
    ]

    def flaky(make: Callable[[], Exception], failures: int) -> Callable[[], str]:
        calls = {"n": 0}

        def fn() -> str:
            calls["n"] += 1
            if calls["n"] <= failures:
                raise make()
            return "ok"

        fn.calls = calls  # type: ignore[attr-defined]
        return fn

    for make in transient:
        res.transient += 1
        fn = flaky(make, 2)
        try:
            if retry_call(fn, what="selftest", sleep=lambda s: None) == "ok" and fn.calls["n"] == 3:
                res.survived += 1
        except Exception as e:  # noqa: BLE001
            res.failures.append(f"{make()!r} was not survived: {type(e).__name__}")
    for make in permanent:
        res.permanent += 1
        fn = flaky(make, 1)
        try:
            retry_call(fn, what="selftest", sleep=lambda s: None)
            res.failures.append(f"{make()!r} was swallowed")
        except GaveUp:
            res.failures.append(f"{make()!r} was retried")
        except Exception:  # noqa: BLE001 - raised at once: right
            res.not_retried += fn.calls["n"] == 1
    try:
        retry_call(
            flaky(lambda: ConnectionRefusedError("down"), 99), what="selftest", attempts=4, sleep=lambda s: None
        )
    except GaveUp:
        res.outage_gave_up = True
    return res
