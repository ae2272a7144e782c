"""The Label Studio side of review: one client, every call through :func:`screenmill.stages.clients.retry.retry_call`.

The server URL comes from ``LABEL_STUDIO_URL`` and the token from ``LABEL_STUDIO_API_KEY`` or the file named by
``LABEL_STUDIO_TOKEN_FILE`` — never from argv, and never logged. ``label_studio_sdk`` is imported when a client is
made (``pip install 'screenmill[review]'``).

Idempotency: every task carries ``data.label_id``; a push first lists the keys already in the project and imports only
the others, in chunks; when a chunk's import fails transiently the keys are listed again before the retry, so an
import that reached the server before its connection broke is not imported twice. A push that gives up (server
down) leaves the project consistent, and a rerun imports exactly what is missing.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
from collections.abc import Iterable, Iterator
from typing import Any

from screenmill.stages.clients.retry import retry_call

INSTALL_HINT = "label-studio-sdk is not installed: `pip install 'screenmill[review]'` (infra/setup.sh installs it)"
_log = logging.getLogger("screenmill.review")


class ReviewConfigError(RuntimeError):
    """Missing or unusable Label Studio settings (URL, token)."""


@dataclasses.dataclass(frozen=True)
class Connection:
    """Where Label Studio is; ``token`` is kept out of ``repr`` so it never reaches logs or manifests."""

    url: str
    token: str = dataclasses.field(repr=False)

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Connection:
        """Read ``LABEL_STUDIO_URL`` and ``LABEL_STUDIO_API_KEY`` / ``LABEL_STUDIO_TOKEN_FILE``.

        Raises:
            ReviewConfigError: the URL or the token is missing, or the token file cannot be read.
        """
        env = os.environ if env is None else env
        url = env.get("LABEL_STUDIO_URL", "").rstrip("/")
        if not url:
            raise ReviewConfigError("set LABEL_STUDIO_URL (e.g. http://127.0.0.1:8089)")
        token = env.get("LABEL_STUDIO_API_KEY", "").strip()
        path = env.get("LABEL_STUDIO_TOKEN_FILE", "")
        if not token and path:
            try:
                with open(path, encoding="utf-8") as f:
                    token = f.read().strip()
            except OSError as e:
                raise ReviewConfigError(f"LABEL_STUDIO_TOKEN_FILE {path}: {e.strerror}") from None
        if not token:
            raise ReviewConfigError("set LABEL_STUDIO_API_KEY or LABEL_STUDIO_TOKEN_FILE")
        return cls(url, token)


def _plain(obj: Any) -> Any:
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json")
    if hasattr(obj, "dict"):
        return obj.dict()
    return obj


class LabelStudioClient:
    """The few calls review needs, each retried on transient failures."""

    def __init__(self, connection: Connection, *, timeout_s: float = 60.0, attempts: int = 5):
        try:
            from label_studio_sdk import LabelStudio
        except ImportError as e:
            raise ImportError(f"{INSTALL_HINT} ({e})") from e
        self._ls = LabelStudio(base_url=connection.url, api_key=connection.token, timeout=timeout_s)
        self._attempts = attempts

    def _call(self, what: str, fn, *args, **kwargs):
        return retry_call(fn, *args, what=f"label studio {what}", attempts=self._attempts, **kwargs)

    def ensure_project(self, title: str, label_config: str) -> int:
        """The id of the project titled ``title``, created with ``label_config`` when there is none."""
        for project in self._call("list projects", lambda: list(self._ls.projects.list(title=title))):
            project = _plain(project)
            if project.get("title") == title:
                return int(project["id"])
        created = self._call("create project", self._ls.projects.create, title=title, label_config=label_config)
        return int(_plain(created)["id"])

    def ensure_local_storage(self, project_id: int, directory: str) -> None:
        """Label Studio serves ``/data/local-files/`` only from folders a project's Local Files storage covers:
        register ``directory`` (under the server's ``LOCAL_FILES_DOCUMENT_ROOT``) once per project."""
        existing = self._call("list storages", lambda: list(self._ls.import_storage.local.list(project=project_id)))
        for storage in existing:
            path = _plain(storage).get("path") or ""
            if directory == path or directory.startswith(path.rstrip("/") + "/"):
                return
        self._call("create storage", self._ls.import_storage.local.create, project=project_id, path=directory,
                   title="screenmill screenshots", use_blob_urls=True)  # fmt: skip

    def tasks(self, project_id: int) -> list[dict]:
        """Every task of the project, with its annotations and predictions, as plain dicts."""
        return self._call("list tasks", lambda: [_plain(t) for t in self._ls.tasks.list(project=project_id)])

    def progress(self, project_id: int) -> dict[str, int]:
        """``{"tasks": n, "reviewed": tasks with an annotation not cancelled, "waiting": the others}``."""
        tasks = self.tasks(project_id)
        done = sum(1 for t in tasks if any(not a.get("was_cancelled") for a in t.get("annotations") or []))
        return {"tasks": len(tasks), "reviewed": done, "waiting": len(tasks) - done}

    def existing_keys(self, project_id: int) -> set[str]:
        """``data.label_id`` of every task already in the project."""
        return {str(t["data"]["label_id"]) for t in self.tasks(project_id) if (t.get("data") or {}).get("label_id")}

    def push(self, project_id: int, tasks: Iterable[dict], chunk_size: int = 200) -> dict[str, int]:
        """Import the tasks not yet in the project, ``chunk_size`` per request.

        Returns:
            ``{"already_there": n, "imported": m}``.

        Raises:
            screenmill.stages.clients.retry.GaveUp: Label Studio stayed unreachable; what was imported before stays, a
            rerun
                resumes.
        """
        tasks = list(tasks)
        known = self.existing_keys(project_id)
        todo = [t for t in tasks if t["data"]["label_id"] not in known]
        counts = {"already_there": len(tasks) - len(todo), "imported": 0}
        for start in range(0, len(todo), chunk_size):
            chunk = todo[start : start + chunk_size]
            counts["imported"] += self._import_chunk(project_id, chunk)
        return counts

    def _import_chunk(self, project_id: int, chunk: list[dict]) -> int:
        state = {"chunk": chunk, "first": True}

        def attempt() -> int:
            if not state["first"]:  # a failed try may still have landed: import only what is missing
                known = self.existing_keys(project_id)
                state["chunk"] = [t for t in state["chunk"] if t["data"]["label_id"] not in known]
            state["first"] = False
            if not state["chunk"]:
                return 0
            self._ls.projects.import_tasks(id=project_id, request=state["chunk"], return_task_ids=True)
            return len(state["chunk"])

        return self._call(f"import {len(chunk)} tasks", attempt)

    def export(self, project_id: int) -> list[dict]:
        """A snapshot export (JSON) of the project's annotated tasks, with their annotations and predictions."""

        def download() -> list[dict]:
            blob = b"".join(self._ls.projects.exports.download_sync(id=project_id, export_type="JSON"))
            return json.loads(blob.decode("utf-8"))

        return self._call("export annotations", download)

    def completed(self, project_id: int) -> Iterator[tuple[dict, dict]]:
        """(task, annotation) for every submitted, not cancelled annotation, from a snapshot export."""
        for task in self.export(project_id):
            for annotation in task.get("annotations") or []:
                annotation = _plain(annotation)
                if not annotation.get("was_cancelled"):
                    yield task, annotation

    def annotate(self, task_id: int, result: list[dict], lead_time: float | None = None) -> dict:
        """Submit an annotation as the token's user (what a reviewer's Submit does; used by tests and scripts)."""
        created = self._call(
            "create annotation", self._ls.annotations.create, id=task_id, result=result, lead_time=lead_time
        )
        return _plain(created)

    def delete_project(self, project_id: int) -> None:
        self._call("delete project", self._ls.projects.delete, id=project_id)
