"""The one retry helper every external call (Label Studio, the Hub) goes through.

Only transient failures are retried — connection errors, timeouts, HTTP 408/425/429/5xx — with full-jitter
exponential backoff (``sleep = random() * min(cap, base * 2**attempt)``); anything else (4xx, bad input, bugs)
raises at once. The last transient error is re-raised as :class:`GaveUp`, naming the call and the attempts.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")
TRANSIENT_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
_log = logging.getLogger("screenmill.retry")


class GaveUp(RuntimeError):
    """A call still failed transiently after every attempt.

    Its message names the last error by type and HTTP status only (see :func:`describe`); the error itself is kept
    as ``last_error`` for code, not chained into tracebacks, because HTTP client errors carry response headers and
    bodies (session cookies, pages that echo the request's ``Authorization`` header).
    """

    def __init__(self, message: str, last_error: BaseException | None = None):
        super().__init__(message)
        self.last_error = last_error


def describe(exc: BaseException) -> str:
    """A log-safe one-line description of ``exc``: its type and HTTP status, or its type and a short message when
    it carries no status (connection errors). Never response headers or bodies."""
    status = status_of(exc)
    if status is not None:
        return f"{type(exc).__name__} (HTTP {status})"
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:160]}" if text else type(exc).__name__


def status_of(exc: BaseException) -> int | None:
    """The HTTP status an exception carries (httpx, requests, label-studio-sdk ``ApiError``), if any."""
    for holder in (exc, getattr(exc, "response", None)):
        for attr in ("status_code", "status"):
            value = getattr(holder, attr, None)
            if isinstance(value, int):
                return value
    return None


def is_transient(exc: BaseException) -> bool:
    """Connection-level failures and retryable HTTP statuses; never client errors or programming errors."""
    status = status_of(exc)
    if status is not None:
        return status in TRANSIENT_STATUS
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return True
    names = {cls.__name__ for cls in type(exc).__mro__}
    # httpx.TransportError (ConnectError, ReadTimeout, RemoteProtocolError…) and requests' ConnectionError/Timeout
    return bool(names & {"TransportError", "ConnectionError", "Timeout", "RemoteDisconnected"})


def retry_call(
    fn: Callable[..., T],
    *args: Any,
    what: str = "call",
    attempts: int = 5,
    base_s: float = 0.5,
    cap_s: float = 8.0,
    transient: Callable[[BaseException], bool] = is_transient,
    sleep: Callable[[float], None] = time.sleep,
    rand: Callable[[], float] = random.random,
    **kwargs: Any,
) -> T:
    """``fn(*args, **kwargs)``, retried on transient failures.

    Args:
        fn: the call.
        what: a short description for logs and the error (never put secrets in it).
        attempts: tries in all (>= 1).
        base_s, cap_s: backoff base and cap in seconds.
        transient: which exceptions are worth another try.
        sleep, rand: injectable for tests.

    Returns:
        What ``fn`` returns.

    Raises:
        GaveUp: every attempt failed transiently.
        Exception: the first non-transient error, unchanged.
    """
    if attempts < 1:
        raise ValueError("attempts must be >= 1")
    for attempt in range(attempts):
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            if not transient(e):
                raise
            if attempt == attempts - 1:
                raise GaveUp(f"{what}: still failing after {attempts} attempts: {describe(e)}", e) from None
            delay = rand() * min(cap_s, base_s * 2**attempt)
            _log.warning("%s failed (%s); retry %d/%d in %.2f s", what, describe(e), attempt + 1, attempts - 1, delay)
            sleep(delay)
    raise AssertionError("unreachable")


def gave_up_behind(exc: BaseException) -> BaseException | None:
    """The :class:`GaveUp` behind ``exc`` (Beam re-raises a DoFn's error with an augmented message)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, GaveUp) or type(exc).__name__ == "GaveUp":
            return exc
        exc = exc.__cause__ or exc.__context__ or getattr(exc, "last_error", None)
    return None
