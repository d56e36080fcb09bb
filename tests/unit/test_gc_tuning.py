"""Start-up objects are frozen: full collections skip them (and new garbage is still collected)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from chainlit_app.gc_tuning import freeze_startup_objects


@pytest.fixture
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_objects_alive_at_start_up_are_frozen_and_new_cycles_are_still_collected(unfrozen: None) -> None:
    class Node:
        other: object = None

    kept = [Node() for _ in range(100)]
    frozen = freeze_startup_objects()
    assert frozen >= len(kept)
    assert not any(obj is kept[0] for obj in gc.get_objects())  # collections no longer look at it
    a, b = Node(), Node()
    a.other, b.other = b, a  # a cycle made after start-up: garbage a collection must still find
    del a, b
    assert gc.collect() >= 2
