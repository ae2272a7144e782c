"""The retry helper retries transient failures only, with bounded jittered backoff."""

from __future__ import annotations

import pytest
from screenmill.stages.clients.retry import GaveUp, is_transient, retry_call, status_of


class HttpError(Exception):
    def __init__(self, status):
        super().__init__(f"HTTP {status}")
        self.status_code = status


def _flaky(errors):
    calls = []

    def fn(x):
        calls.append(x)
        if errors:
            raise errors.pop(0)
        return x * 2

    return fn, calls


def test_transient_errors_are_retried_with_growing_capped_delays():
    fn, calls = _flaky([ConnectionError("down"), HttpError(503), TimeoutError("slow")])
    sleeps = []
    assert retry_call(fn, 21, what="t", sleep=sleeps.append, rand=lambda: 1.0, base_s=0.5, cap_s=1.5) == 42
    assert calls == [21] * 4
    assert sleeps == [0.5, 1.0, 1.5]


def test_client_errors_raise_at_once():
    fn, calls = _flaky([HttpError(404)])
    with pytest.raises(HttpError):
        retry_call(fn, 1, sleep=lambda s: None)
    assert len(calls) == 1
    fn, calls = _flaky([ValueError("bug")])
    with pytest.raises(ValueError):
        retry_call(fn, 1, sleep=lambda s: None)
    assert len(calls) == 1


def test_gives_up_after_the_attempts():
    fn, calls = _flaky([HttpError(502)] * 10)
    with pytest.raises(GaveUp, match="push: still failing after 3 attempts") as err:
        retry_call(fn, 1, what="push", attempts=3, sleep=lambda s: None)
    assert isinstance(err.value.last_error, HttpError) and len(calls) == 3
    assert err.value.__cause__ is None and "HTTP 502" in str(err.value)  # no chained response in tracebacks


def test_classification():
    class Resp:
        status_code = 429

    class WithResponse(Exception):
        response = Resp()

    assert status_of(WithResponse()) == 429 and is_transient(WithResponse())
    assert not is_transient(HttpError(400)) and is_transient(HttpError(500))

    class ConnectError(Exception):
        pass

    class TransportError(Exception):
        pass

    class HttpxConnect(ConnectError, TransportError):
        pass

    assert is_transient(HttpxConnect()) and not is_transient(KeyError("x"))
