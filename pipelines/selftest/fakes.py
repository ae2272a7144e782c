"""Stand-ins for the outside world: an in-memory Hugging Face Hub that fails on demand, a port nothing listens on,
environment variables set for a block, and retries that record their back-off instead of sleeping it.
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any


def closed_port() -> int:
    """A 127.0.0.1 port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def env(**values: str | None) -> Iterator[None]:
    old = {k: os.environ.get(k) for k in values}
    try:
        for k, v in values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def no_backoff() -> Iterator[list[float]]:
    """``retry_call`` sleeps recorded instead of slept (the retries themselves still happen)."""
    from screenmill.stages.clients.retry import retry_call

    sleeps: list[float] = []
    old = retry_call.__kwdefaults__["sleep"]
    retry_call.__kwdefaults__["sleep"] = sleeps.append
    try:
        yield sleeps
    finally:
        retry_call.__kwdefaults__["sleep"] = old


class FakeHub:
    """``huggingface_hub.HfApi`` methods patched to an in-memory dataset repository, for a ``with`` block.

    Args:
        fail_commits: how the next commits fail: a number (that many raise HTTP 503, what a Hub outage looks like) or
            the exceptions they raise, in turn (``fail`` holds those still to come and can be refilled).
        files: what the repository holds before the first call (a new Hub repository has a ``.gitattributes``).

    Every call must be for a dataset repository and a commit may only add files (else ``AssertionError``).
    ``files``, ``commits`` (the paths of each commit), ``tokens`` (the tokens the client used) and ``calls`` (the
    method names, in order) record what happened.
    """

    def __init__(self, fail_commits: int | Iterable[BaseException] = 0, files: Mapping[str, bytes] | None = None):
        self.files: dict[str, bytes] = dict(files or {})
        self.commits: list[list[str]] = []
        self.tokens: set[str] = set()
        self.calls: list[str] = []
        if isinstance(fail_commits, int):
            fail_commits = [_HubUnavailable("503 Service Unavailable from the hub") for _ in range(fail_commits)]
        self.fail: list[BaseException] = list(fail_commits)
        self._saved: dict[str, Any] = {}

    def _seen(self, api, name: str, kw: Mapping[str, Any]) -> None:
        if kw.get("repo_type") != "dataset":
            raise AssertionError(f"{name} called for a {kw.get('repo_type')!r} repository, not a dataset")
        self.tokens.add(api.token)
        self.calls.append(name)

    def __enter__(self) -> FakeHub:
        import huggingface_hub as hf

        hub = self

        def create_repo(api, repo_id, **kw):
            hub._seen(api, "create_repo", kw)
            return f"https://huggingface.co/datasets/{repo_id}"

        def list_repo_files(api, repo_id, **kw):
            hub._seen(api, "list_repo_files", kw)
            return sorted(hub.files)

        def hf_hub_download(api, repo_id, filename, local_dir=None, **kw):
            hub._seen(api, "hf_hub_download", kw)
            path = Path(local_dir) / filename
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(hub.files[filename])
            return str(path)

        def create_commit(api, repo_id, operations, commit_message, **kw):
            hub._seen(api, "create_commit", kw)
            if hub.fail:
                raise hub.fail.pop(0)
            if not all(isinstance(op, hf.CommitOperationAdd) for op in operations):
                raise AssertionError(f"a commit that does more than add files: {operations}")
            for op in operations:
                with open(op.path_or_fileobj, "rb") as f:
                    hub.files[op.path_in_repo] = f.read()
            hub.commits.append([op.path_in_repo for op in operations])
            return hf.CommitInfo(
                commit_url=f"https://huggingface.co/datasets/{repo_id}/commit/{len(hub.commits)}",
                commit_message=commit_message,
                commit_description="",
                oid="0" * 40,
            )

        for name, fn in (
            ("create_repo", create_repo),
            ("list_repo_files", list_repo_files),
            ("hf_hub_download", hf_hub_download),
            ("create_commit", create_commit),
        ):
            self._saved[name] = getattr(hf.HfApi, name)
            setattr(hf.HfApi, name, fn)
        return self

    def __exit__(self, *exc) -> None:
        import huggingface_hub as hf

        for name, fn in self._saved.items():
            setattr(hf.HfApi, name, fn)
        self._saved.clear()


class _HubUnavailable(ConnectionError):
    status_code = 503
