"""Scratch folders (:mod:`screenmill.annotators.scratch`): swept when their process is gone, closed at exit."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

from screenmill.annotators import scratch

PREFIX = "screenmill-scratchtest-"


def _child(body: str) -> subprocess.Popen:
    code = "from screenmill.annotators import scratch\n" + textwrap.dedent(body)
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)


def test_a_killed_process_folder_is_swept_and_a_live_one_is_kept(tmp_path):
    mine = scratch.make_dir(PREFIX)
    try:
        child = _child(f"import time; print(scratch.make_dir({PREFIX!r}), flush=True); time.sleep(60)")
        theirs = child.stdout.readline().strip()
        assert os.path.isdir(theirs) and theirs != mine
        assert scratch.sweep(PREFIX) == []  # both processes run
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
        odd = tmp_path / f"{PREFIX}no-pid"
        odd.mkdir()
        assert scratch.sweep(PREFIX) == [theirs] and not os.path.exists(theirs)
        assert scratch.sweep(PREFIX, str(tmp_path)) == [] and odd.exists()  # a name without pid is not ours
        assert os.path.isdir(mine)
    finally:
        os.rmdir(mine)


def test_a_session_still_open_at_exit_is_closed():
    child = _child(
        f"""
        import os, shutil
        class Session:
            def __init__(self):
                self.dir = scratch.make_dir({PREFIX!r})
                scratch.close_at_exit(self)
            def close(self):
                scratch.forget(self)
                shutil.rmtree(self.dir)
                print("closed", flush=True)
        kept, closed = Session(), Session()
        closed.close()
        print(kept.dir, closed.dir, flush=True)
        """
    )
    out, _ = child.communicate(timeout=60)
    lines = out.split("\n")
    assert lines[0] == "closed" and lines[2] == "closed"  # the one still open was closed at exit, once
    assert not any(os.path.exists(d) for d in lines[1].split())
