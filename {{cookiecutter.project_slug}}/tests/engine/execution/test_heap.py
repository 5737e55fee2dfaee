"""execution/heap.py: a run's objects are frozen for its length, then handed back whole."""

from __future__ import annotations

import gc
import weakref

from {{ cookiecutter.package_name }}.execution.heap import paused, settle, settling


class Node:
    """An object in a reference cycle: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


def test_objects_are_frozen_inside_and_all_unfrozen_after_nested_blocks() -> None:
    assert gc.get_freeze_count() == 0
    with settling():
        inside = gc.get_freeze_count()
        assert inside > 0
        with settling():
            kept = [Node() for _ in range(10)]
            settle()
            assert gc.get_freeze_count() >= inside + 10
        assert gc.get_freeze_count() > 0, "the inner block must not unfreeze the outer one's objects"
    assert gc.get_freeze_count() == 0
    del kept


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
