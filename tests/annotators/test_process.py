"""One model per worker process (:mod:`screenmill.annotators.process`)."""

from __future__ import annotations

from screenmill.annotators.process import held, per_process, release


def test_per_process_holds_one_model_per_slot_and_replaces_it_on_a_new_key():
    closed = []
    first = per_process("test-slot", "a", lambda: ["model a"], close=closed.append)
    assert per_process("test-slot", "a", lambda: ["other"]) is first  # built once, shared
    second = per_process("test-slot", "b", lambda: ["model b"], close=closed.append)
    assert second == ["model b"] and closed == [["model a"]]
    assert held("test-slot") is second
    release("test-slot", close=closed.append)
    assert held("test-slot") is None and closed == [["model a"], ["model b"]]
