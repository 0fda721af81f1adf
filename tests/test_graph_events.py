"""The plain runner's flash-copy events (autotiler/codegen/graph.py, _copy_events): a copy holds
its event from its issue (after node ``prefetch_start``, -1: before node 0) to its wait (before
node ``first``), then the event is free for a later copy of the same flash family; the runner
declares as many events as copies are ever in flight (MobileNet v2 0.35 fetched 261 constants,
whose events overflowed cluster core 0's stack on GVSoC)."""

from __future__ import annotations

from types import SimpleNamespace

from autotiler.codegen.graph import _copy_events


def sym(name: str, start: int, first: int, family: str = "HYPERFLASH"):
    return SimpleNamespace(name=name, prefetch_start=start, first=first, family=family)


def events(fetched: list, n: int) -> tuple:
    return _copy_events(fetched, n, lambda s: s.family)


def test_an_event_is_reused_once_its_copy_is_waited():
    # a, b in flight together before node 0; c issued after node 0 (a waited), d after node 1
    fetched = [sym("a", -1, 0), sym("b", -1, 1), sym("c", 0, 2), sym("d", 1, 3)]
    slots, event = events(fetched, 4)
    assert slots == ["HYPERFLASH", "HYPERFLASH"]
    assert event == {"a": 0, "b": 1, "c": 0, "d": 1}


def test_a_copy_issued_before_another_is_waited_takes_its_own_event():
    # c is issued after node 0, d's wait comes before node 2: three copies in flight at once
    fetched = [sym("a", -1, 1), sym("b", -1, 2), sym("c", 0, 3)]
    slots, event = events(fetched, 4)
    assert len(slots) == 3 and sorted(event.values()) == [0, 1, 2]


def test_many_constants_fetched_one_node_ahead_take_two_events_per_node():
    n = 60
    fetched = [sym(f"w{i}_{k}", i - 1, i) for i in range(n) for k in range(2)]
    slots, event = events(fetched, n)
    assert len(slots) == 2 and set(event.values()) == {0, 1}


def test_events_of_two_flash_families_are_never_shared():
    fetched = [sym("a", -1, 0), sym("b", 0, 1, "QSPIFLASH"), sym("c", 1, 2)]
    slots, event = events(fetched, 3)
    assert slots == ["HYPERFLASH", "QSPIFLASH"] and event == {"a": 0, "b": 1, "c": 0}
