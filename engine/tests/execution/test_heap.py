"""execution/heap.py: a run's objects are frozen for its length, then handed back whole."""

from __future__ import annotations

import gc
import weakref

from rag_regress.execution.heap import paused, settle, settling


class Node:
    """An object in a reference cycle: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


def test_objects_are_frozen_inside_and_all_unfrozen_after_nested_blocks() -> None:
    # Asserted on the test's own cycles, not on gc.get_freeze_count(): frozen objects that
    # die by their reference count leave the frozen set, so that count can fall at any time.
    assert gc.get_freeze_count() == 0
    with settling():
        assert gc.get_freeze_count() > 0
        with settling():
            nodes = [Node() for _ in range(10)]
            gone = [weakref.ref(node) for node in nodes]
            settle()
            del nodes
            gc.collect()
            assert all(ref() is not None for ref in gone), "frozen: the collector skips them"
        gc.collect()
        assert all(ref() is not None for ref in gone), (
            "the inner block must not unfreeze what the outer one still holds frozen"
        )
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert all(ref() is None for ref in gone), "after the outermost block, cycles are collected"


def test_settle_outside_a_block_freezes_nothing() -> None:
    settle()
    assert gc.get_freeze_count() == 0


def test_a_cycle_left_inside_a_block_is_collected_once_it_ends() -> None:
    with settling():
        node = Node()
        gone = weakref.ref(node)
        settle()
        del node
        gc.collect()
        assert gone() is not None, "frozen: the collector does not look at it"
    gc.collect()
    assert gone() is None


def test_a_cycle_made_after_the_last_settle_is_collected_inside_the_block() -> None:
    with settling():
        node = Node()
        gone = weakref.ref(node)
        del node
        gc.collect()
        assert gone() is None


def test_paused_stops_collections_and_restores_the_collector_as_it_was() -> None:
    with paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused():
            pass
        assert not gc.isenabled(), "a collector someone else switched off stays off"
    finally:
        gc.enable()
