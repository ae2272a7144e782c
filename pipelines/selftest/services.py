"""Services and secrets: planted tokens in ``HF_TOKEN`` / ``HUGGINGFACE_HUB_TOKEN`` / ``LABEL_STUDIO_API_KEY``
through a run, an export to a local folder, an export to a fake Hub whose commit fails twice with 503, and a review
push / pull to a closed port. The upload must succeed, review must exit 1 ("rerun to resume"), and no output file
(Parquet decoded) nor any captured output may hold a token.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import traceback
from pathlib import Path

from screenmill.pipelines.selftest.audit import DT, captured
from screenmill.pipelines.selftest.fakes import FakeHub, closed_port, env, no_backoff
from screenmill.pipelines.selftest.images import encode, ui

TOKEN_VARS = ("HF_TOKEN", "HUGGINGFACE_HUB_TOKEN", "LABEL_STUDIO_API_KEY")


@dataclasses.dataclass
class ServiceResult:
    planted: int = 0
    scanned_files: int = 0
    scanned_chars: int = 0
    hits: list[str] = dataclasses.field(default_factory=list)
    faults: dict[str, bool] = dataclasses.field(default_factory=dict)
    skipped: list[str] = dataclasses.field(default_factory=list)
    crash: str | None = None

    @property
    def ok(self) -> bool:
        return self.crash is None and not self.hits and all(self.faults.values())


def _text_of(path: Path) -> str:
    """A file's content as text for a secret scan: Parquet decoded (its strings are compressed on disk)."""
    data = path.read_bytes()
    text = data.decode("latin-1")
    if data[:4] == b"PAR1":
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(path)
            text += json.dumps(table.to_pylist(), default=str) + str(table.schema.metadata)
        except Exception as e:  # noqa: BLE001 - an unreadable file is scanned as bytes only
            text += f"<parquet unreadable: {e}>"
    return text


def scan_for(secrets: list[str], roots: list[Path], texts: dict[str, str]) -> tuple[list[str], int, int]:
    """Where any of ``secrets`` appears: every file under ``roots`` (Parquet decoded) and every captured text."""
    hits, files, chars = [], 0, 0
    for root in roots:
        for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
            text = _text_of(path)
            files += 1
            chars += len(text)
            hits += [f"{path}: {s[:6]}…" for s in secrets if s in text]
    for name, text in texts.items():
        chars += len(text)
        hits += [f"captured {name}: {s[:6]}…" for s in secrets if s in text]
    return hits, files, chars


def planted_tokens(base: Path) -> dict[str, str]:
    """A unique fake value per token variable (unique per work folder, so hits cannot come from elsewhere)."""
    suffix = hashlib.sha256(str(base).encode()).hexdigest()[:24]
    return {var: f"planted-{var.lower()}-{suffix}" for var in TOKEN_VARS}


def run_services(base: Path) -> ServiceResult:
    """Planted tokens through run, export (local + mocked Hub failing twice), review push / pull to a closed port."""
    import importlib.util

    res = ServiceResult()
    planted = planted_tokens(base)
    res.planted = len(planted)
    inp, out, local, hub_cache = base / "in", base / "out", base / "local", base / "hub"
    inp.mkdir(parents=True)
    for seed in (50, 51):
        (inp / f"shot_{seed}.png").write_bytes(encode(ui(seed), "PNG"))
    (inp / "broken.png").write_bytes(encode(ui(52), "PNG")[:200])
    texts: dict[str, str] = {}
    url = f"http://127.0.0.1:{closed_port()}"
    ls_env = {"LABEL_STUDIO_URL": url, "LABEL_STUDIO_TOKEN_FILE": None}
    try:
        with env(**planted, **ls_env, HF_HUB_OFFLINE=None), captured() as buf, no_backoff():
            from screenmill.pipelines.run import run

            run(["--input", str(inp), "--output", str(out), "--annotator", "none", "--dt", DT])
            texts["run"] = buf.getvalue()
            if importlib.util.find_spec("datasets") and importlib.util.find_spec("huggingface_hub"):
                from screenmill.pipelines.export import main as export

                res.faults["export --local-dir"] = export([str(out), "--local-dir", str(local)]) == 0
                with FakeHub(fail_commits=2) as hub:
                    code = export([str(out), "--repo", "org/selftest", "--seed", "s"])
                res.faults["Hub commit after 2 x 503"] = code == 0 and len(hub.commits) == 1
                res.faults["Hub client got the env token"] = hub.tokens == {planted["HF_TOKEN"]}
                hub_cache.mkdir()
                for name, data in hub.files.items():
                    (hub_cache / name.replace("/", "__")).write_bytes(data)
            else:
                res.skipped.append("export (datasets / huggingface_hub not installed)")
            if importlib.util.find_spec("label_studio_sdk"):
                from screenmill.pipelines.review import main as review

                for action in ("push", "pull"):
                    start = len(buf.getvalue())
                    code = review([action, str(out), "--project", "selftest"])
                    said = buf.getvalue()[start:]
                    res.faults[f"review {action} with Label Studio down"] = code == 1 and "rerun to resume" in said
            else:
                res.skipped.append("review (label-studio-sdk not installed)")
            texts["all"] = buf.getvalue()
    except Exception as e:  # noqa: BLE001 - a crash is the figure this reports
        res.crash = f"{type(e).__name__}: {e}"
        texts["traceback"] = traceback.format_exc()
    res.hits, res.scanned_files, res.scanned_chars = scan_for(list(planted.values()), [out, local, hub_cache], texts)
    return res
