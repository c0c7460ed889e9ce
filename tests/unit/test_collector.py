"""``collector_paused``: no collector pass inside the block, none over what it built when it ends (handed to
the oldest generation), its cycles still freed by a full pass, and a process's own frozen objects left
frozen."""

from __future__ import annotations

import gc
import weakref

from igg.graph.collector import collector_paused


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def _in_generation(obj: object, generation: int) -> bool:
    return any(o is obj for o in gc.get_objects(generation=generation))


def test_what_the_block_built_is_not_walked_again_by_the_young_pass() -> None:
    gc.collect()
    with collector_paused():
        assert not gc.isenabled()
        built = [{"key": [i]} for i in range(1000)]
    assert gc.isenabled()
    assert not _in_generation(built, 0) and _in_generation(built, 2)


def test_cycles_left_by_the_block_are_freed_by_a_full_pass() -> None:
    with collector_paused():
        a, b = _Node(), _Node()
        a.other, b.other = b, a
        gone = weakref.ref(a)
        del a, b
    assert gone() is not None  # a cycle: reference counting alone cannot free it
    gc.collect()
    assert gone() is None


def test_a_process_that_froze_its_own_objects_keeps_them_frozen() -> None:
    gc.collect()
    mine = [[1], [2]]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with collector_paused():
            built = [[i] for i in range(100)]
        assert gc.get_freeze_count() == frozen
        assert _in_generation(built, 0)  # then the block's objects are young, as before
        assert mine
    finally:
        gc.unfreeze()


def test_nested_blocks_are_one_pause() -> None:
    with collector_paused():
        with collector_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
