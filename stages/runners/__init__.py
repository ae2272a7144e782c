"""Which runner Beam arguments name, and where its workers run; no runner is imported here.

Kept apart from :mod:`screenmill.stages.runners.dask` (which imports dask and distributed, ~0.5 s) so that a job on the
default runner never pays for it: Beam imports ``screenmill.stages.runners.dask.DaskRunner`` by its class path only
when a job names it.
"""

from __future__ import annotations

#: The class :func:`resolve_runner` puts in place of Beam's stock DaskRunner.
RUNNER = "screenmill.stages.runners.dask.DaskRunner"
STOCK_RUNNER = "apache_beam.runners.dask.dask_runner.DaskRunner"
_DASK_NAMES = ("DaskRunner", STOCK_RUNNER)


def _runner_options(beam_args: list[str]):
    """``(index, name)`` for every ``--runner`` option: the index of the argument that holds the runner's name
    (``--runner=X`` itself, or the ``X`` after ``--runner``).

    Raises:
        ValueError: a ``--runner`` without a value.
    """
    for i, arg in enumerate(beam_args):
        if arg.startswith("--runner="):
            name = arg.split("=", 1)[1]
        elif arg == "--runner":
            if i + 1 == len(beam_args) or beam_args[i + 1].startswith("--"):
                raise ValueError("--runner needs a value (e.g. --runner=DaskRunner)")
            i, name = i + 1, beam_args[i + 1]
        else:
            continue
        if not name:
            raise ValueError("--runner needs a value (e.g. --runner=DaskRunner)")
        yield i, name


def resolve_runner(beam_args: list[str]) -> list[str]:
    """``beam_args`` with ``--runner=DaskRunner`` or the stock DaskRunner's class path replaced by this runner's.

    The stock runner silently drops most of a screenmill job's outputs (see :mod:`screenmill.stages.runners.dask`), so
    it is never used; every other argument passes through untouched.

    Raises:
        ValueError: a ``--runner`` without a value.
    """
    out = list(beam_args)
    for i, name in _runner_options(beam_args):
        if name in _DASK_NAMES:
            out[i] = f"--runner={RUNNER}" if out[i].startswith("--runner=") else RUNNER
    return out


#: Runners whose workers run in the driver's environment (this machine, the same installed packages).
LOCAL_RUNNERS = frozenset(
    {"DirectRunner", "FnApiRunner", "BundleBasedDirectRunner", "SwitchingDirectRunner", "PrismRunner"}
)


def runner_name(beam_args: list[str]) -> str | None:
    """The runner Beam arguments name (``--runner=X`` or ``--runner X``; the last one wins, as in Beam's own parser),
    None where they name none.

    Raises:
        ValueError: a ``--runner`` without a value.
    """
    names = [name for _, name in _runner_options(beam_args)]
    return names[-1] if names else None


def is_local_runner(name: str | None) -> bool:
    """Whether the runner :func:`runner_name` returned (None: Beam's in-process default) runs the job's workers in
    this environment (:data:`LOCAL_RUNNERS`, by class name or class path)."""
    return name is None or name.rsplit(".", 1)[-1] in LOCAL_RUNNERS


def default_runner():
    """The runner of a job that names none: Beam's in-process FnApiRunner (the DirectRunner's engine; works offline,
    where Prism would download its binary)."""
    from apache_beam.runners.portability.fn_api_runner import FnApiRunner

    return FnApiRunner()
