"""PendingTable: ids, add/pop/cancel, deadlines, capacity, references, and a model check."""

import enum
import gc
import heapq
import math
import pickle
import random
import sys
import weakref

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from mcpfast._core.pending import (
    DEFAULT_CAPACITY,
    MAX_CAPACITY,
    MAX_REQUEST_ID,
    DuplicateRequestId,
    IdSpaceExhausted,
    PendingError,
    PendingTable,
    PendingTableFull,
)

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
INF = math.inf


class Waiter:
    """A distinct, weak-referenceable stand-in for a Future or callback."""

    def __init__(self, tag=None):
        self.tag = tag

    def __repr__(self):
        return f"Waiter({self.tag!r})"


# ---------------------------------------------------------------------------- construction


def test_defaults():
    table = PendingTable()
    assert table.capacity == DEFAULT_CAPACITY == 65536
    assert len(table) == 0
    assert not table
    assert table.next_id() == 1
    assert table.next_deadline() is None
    assert repr(table) == "<PendingTable 0/65536 pending>"


def test_constants():
    assert MAX_REQUEST_ID == 2**60 - 1
    assert MAX_CAPACITY == 2**30


@pytest.mark.parametrize("capacity", [1, 2, 17, MAX_CAPACITY])
def test_capacity_accepted(capacity):
    table = PendingTable(capacity)
    assert table.capacity == capacity
    table.add(1, Waiter())
    assert len(table) == 1


@pytest.mark.parametrize("capacity", [0, -1, MAX_CAPACITY + 1, 2**64])
def test_capacity_out_of_range(capacity):
    with pytest.raises(ValueError, match="capacity must be between 1 and"):
        PendingTable(capacity)


@pytest.mark.parametrize("capacity", [True, 8.0, "8", None])
def test_capacity_wrong_type(capacity):
    with pytest.raises(TypeError, match="capacity must be an int"):
        PendingTable(capacity)


@pytest.mark.parametrize("first_id", [-1, MAX_REQUEST_ID + 1, 2**70])
def test_first_id_out_of_range(first_id):
    with pytest.raises(ValueError, match="first_id must be between 0 and"):
        PendingTable(first_id=first_id)


@pytest.mark.parametrize("first_id", [False, 1.0, "1"])
def test_first_id_wrong_type(first_id):
    with pytest.raises(TypeError, match="first_id must be an int"):
        PendingTable(first_id=first_id)


def test_keyword_arguments():
    table = PendingTable(capacity=5, first_id=0)
    assert table.capacity == 5
    assert table.next_id() == 0


def test_not_subclassable():
    with pytest.raises(TypeError):
        type("Sub", (PendingTable,), {})


def test_not_picklable():
    with pytest.raises(TypeError):
        pickle.dumps(PendingTable())


def test_generic_alias_for_annotations():
    alias = PendingTable[Waiter]
    assert alias.__origin__ is PendingTable
    assert alias.__args__ == (Waiter,)


# ---------------------------------------------------------------------------- next_id


def test_next_id_counts_up():
    table = PendingTable(first_id=41)
    assert [table.next_id() for _ in range(5)] == [41, 42, 43, 44, 45]


def test_next_id_exhaustion_near_the_end():
    table = PendingTable(first_id=MAX_REQUEST_ID - 2)
    assert table.next_id() == MAX_REQUEST_ID - 2
    assert table.next_id() == MAX_REQUEST_ID - 1
    assert table.next_id() == MAX_REQUEST_ID
    with pytest.raises(IdSpaceExhausted) as info:
        table.next_id()
    assert isinstance(info.value, PendingError)
    assert info.value.max_id == MAX_REQUEST_ID
    assert str(MAX_REQUEST_ID) in str(info.value)
    assert "exhausted" in str(info.value)
    # It stays exhausted; it never wraps around or goes past the limit.
    for _ in range(3):
        with pytest.raises(IdSpaceExhausted):
            table.next_id()


def test_next_id_first_id_is_the_last_id():
    table = PendingTable(first_id=MAX_REQUEST_ID)
    assert table.next_id() == MAX_REQUEST_ID
    with pytest.raises(IdSpaceExhausted):
        table.next_id()


def test_exhaustion_leaves_pending_requests_usable():
    table = PendingTable(first_id=MAX_REQUEST_ID)
    waiter = Waiter()
    last = table.next_id()
    table.add(last, waiter, 5.0)
    with pytest.raises(IdSpaceExhausted):
        table.next_id()
    assert last in table
    assert table.pop(last) is waiter


def test_next_id_independent_of_table_contents():
    table = PendingTable()
    table.add(1, Waiter())
    table.clear()
    assert table.next_id() == 1
    assert table.next_id() == 2


# ---------------------------------------------------------------------------- add


def test_add_then_pop():
    table = PendingTable()
    waiter = Waiter()
    request_id = table.next_id()
    table.add(request_id, waiter)
    assert len(table) == 1
    assert request_id in table
    assert table.pop(request_id) is waiter
    assert len(table) == 0
    assert request_id not in table
    assert table.pop(request_id) is None


def test_add_returns_none():
    assert PendingTable().add(1, Waiter()) is None


@pytest.mark.parametrize("request_id", [0, -1, INT64_MIN, INT64_MAX, MAX_REQUEST_ID, 2**32, 2**31 - 1])
def test_add_any_int64_id(request_id):
    table = PendingTable()
    waiter = Waiter()
    table.add(request_id, waiter, 1.0)
    assert request_id in table
    assert table.next_deadline() == 1.0
    assert table.pop(request_id) is waiter


def test_add_int_subclass_id():
    class Id(enum.IntEnum):
        FIVE = 5

    table = PendingTable()
    waiter = Waiter()
    table.add(Id.FIVE, waiter)
    assert 5 in table
    assert table.pop(5) is waiter


@pytest.mark.parametrize("request_id", ["1", b"1", 1.0, None, True, False, [1], object()])
def test_add_refuses_non_int_id(request_id):
    table = PendingTable()
    with pytest.raises(TypeError, match="request id must be an int"):
        table.add(request_id, Waiter())
    assert len(table) == 0


@pytest.mark.parametrize("request_id", [INT64_MAX + 1, INT64_MIN - 1, 2**200])
def test_add_refuses_id_beyond_int64(request_id):
    table = PendingTable()
    with pytest.raises(OverflowError, match="signed 64-bit"):
        table.add(request_id, Waiter())
    assert len(table) == 0


def test_add_refuses_none_waiter():
    table = PendingTable()
    with pytest.raises(TypeError, match="waiter must not be None"):
        table.add(1, None)
    assert len(table) == 0
    assert 1 not in table


@pytest.mark.parametrize("deadline", [0, 7, 1.5, -3.25, 1e300, -INF])
def test_add_deadline_values(deadline):
    table = PendingTable()
    table.add(1, Waiter(), deadline)
    assert table.next_deadline() == float(deadline)
    assert type(table.next_deadline()) is float


def test_add_infinite_deadline_means_none():
    table = PendingTable()
    table.add(1, Waiter(), INF)
    assert table.next_deadline() is None
    assert table.expire(INF) == []
    assert len(table) == 1


def test_add_float_subclass_deadline():
    class Seconds(float):
        pass

    table = PendingTable()
    table.add(1, Waiter(), Seconds(2.5))
    assert table.next_deadline() == 2.5


def test_add_refuses_nan_deadline():
    table = PendingTable()
    with pytest.raises(ValueError, match="NaN"):
        table.add(1, Waiter(), math.nan)
    assert len(table) == 0
    assert 1 not in table
    assert table.next_deadline() is None


@pytest.mark.parametrize("deadline", ["1.0", b"1", True, [1.0], object()])
def test_add_refuses_bad_deadline_type(deadline):
    table = PendingTable()
    with pytest.raises(TypeError, match="deadline must be a float"):
        table.add(1, Waiter(), deadline)
    assert len(table) == 0


def test_add_keyword_arguments():
    table = PendingTable()
    waiter = Waiter()
    table.add(id=3, waiter=waiter, deadline=4.0)
    assert table.next_deadline() == 4.0
    assert table.pop(3) is waiter


def test_same_waiter_under_several_ids():
    table = PendingTable()
    waiter = Waiter()
    table.add(1, waiter)
    table.add(2, waiter)
    assert table.pop(1) is waiter
    assert table.pop(2) is waiter


# ---------------------------------------------------------------------------- duplicates


def test_duplicate_id_refused():
    table = PendingTable()
    first, second = Waiter("first"), Waiter("second")
    table.add(7, first, 1.0)
    with pytest.raises(DuplicateRequestId) as info:
        table.add(7, second, 0.5)
    assert isinstance(info.value, PendingError)
    assert info.value.id == 7
    assert "7" in str(info.value) and "already pending" in str(info.value)
    # The first registration is untouched, deadline included.
    assert len(table) == 1
    assert table.next_deadline() == 1.0
    assert table.pop(7) is first


def test_id_reusable_after_pop():
    table = PendingTable()
    table.add(7, Waiter())
    table.pop(7)
    waiter = Waiter()
    table.add(7, waiter)
    assert table.pop(7) is waiter


def test_duplicate_reported_before_full():
    table = PendingTable(1)
    table.add(1, Waiter())
    with pytest.raises(DuplicateRequestId):
        table.add(1, Waiter())
    with pytest.raises(PendingTableFull):
        table.add(2, Waiter())


# ---------------------------------------------------------------------------- capacity


def test_full_then_free_a_slot_then_add():
    table = PendingTable(3)
    waiters = [Waiter(i) for i in range(3)]
    for i, waiter in enumerate(waiters):
        table.add(i, waiter, float(i))
    with pytest.raises(PendingTableFull) as info:
        table.add(3, Waiter(), 0.0)
    assert isinstance(info.value, PendingError)
    assert info.value.capacity == 3
    assert "full" in str(info.value) and "3" in str(info.value)
    # The failed add changed nothing.
    assert len(table) == 3
    assert 3 not in table
    assert table.next_deadline() == 0.0

    assert table.pop(1) is waiters[1]
    late = Waiter("late")
    table.add(3, late, 5.0)
    assert len(table) == 3
    with pytest.raises(PendingTableFull):
        table.add(4, Waiter())
    assert table.expire(0.0) == [waiters[0]]
    four, five = Waiter(4), Waiter(5)
    table.add(4, four)
    assert table.cancel(2) is waiters[2]
    table.add(5, five)
    assert len(table) == 3
    assert_same_list(table.clear(), [late, four, five])
    assert len(table) == 0
    for i in range(3):
        table.add(10 + i, Waiter())
    assert len(table) == 3


def test_capacity_one():
    table = PendingTable(1)
    for i in range(100):
        waiter = Waiter(i)
        table.add(i, waiter, float(i))
        with pytest.raises(PendingTableFull):
            table.add(i + 1000, Waiter())
        assert table.pop(i) is waiter


def test_fill_to_odd_capacity_across_growth():
    capacity = 1000  # not a power of two: the last growth step stops at the capacity
    table = PendingTable(capacity)
    for i in range(capacity):
        table.add(i, Waiter(i))
    with pytest.raises(PendingTableFull):
        table.add(capacity, Waiter())
    assert len(table) == capacity
    assert all(i in table for i in range(capacity))


# ---------------------------------------------------------------------------- pop / cancel


UNKNOWN_IDS = [
    "1",
    "",
    "abc",
    b"1",
    1.0,
    1.5,
    math.nan,
    math.inf,
    None,
    True,
    False,
    [1],
    {"id": 1},
    (1,),
    object(),
    2,
    -1,
    INT64_MAX,
    INT64_MIN,
    INT64_MAX + 1,
    INT64_MIN - 1,
    2**64 + 1,  # would alias id 1 if truncated to 64 bits
    2**1000,
]


@pytest.mark.parametrize("unknown", UNKNOWN_IDS, ids=repr)
@pytest.mark.parametrize("method", ["pop", "cancel"])
def test_pop_and_cancel_unknown_ids(method, unknown):
    table = PendingTable()
    waiter = Waiter()
    table.add(1, waiter, 3.0)
    assert getattr(table, method)(unknown) is None
    assert (unknown in table) is False
    # The real entry is untouched.
    assert len(table) == 1
    assert table.next_deadline() == 3.0
    assert table.pop(1) is waiter


@pytest.mark.parametrize("unknown", UNKNOWN_IDS, ids=repr)
def test_pop_unknown_on_empty_table(unknown):
    table = PendingTable()
    assert table.pop(unknown) is None
    assert table.cancel(unknown) is None
    assert unknown not in table


def test_pop_int_subclass_id():
    class Id(enum.IntEnum):
        ONE = 1

    table = PendingTable()
    waiter = Waiter()
    table.add(1, waiter)
    assert Id.ONE in table
    assert table.pop(Id.ONE) is waiter


def test_cancel_drops_the_deadline():
    table = PendingTable()
    waiter = Waiter()
    table.add(1, waiter, 1.0)
    table.add(2, Waiter(), 2.0)
    assert table.cancel(1) is waiter
    assert table.next_deadline() == 2.0
    assert table.cancel(1) is None
    assert table.expire(1.5) == []
    assert len(table) == 1


def test_pop_drops_the_deadline():
    table = PendingTable()
    table.add(1, Waiter(), 1.0)
    table.pop(1)
    assert table.next_deadline() is None
    assert table.expire(100.0) == []


# ---------------------------------------------------------------------------- expire / next_deadline


def test_expire_earliest_first_ties_by_id():
    table = PendingTable()
    waiters = {}
    for request_id, deadline in [(5, 3.0), (2, 1.0), (9, 2.0), (1, 2.0), (4, 2.0), (7, None), (3, 10.0)]:
        waiters[request_id] = Waiter(request_id)
        table.add(request_id, waiters[request_id], deadline)
    expired = table.expire(3.0)
    assert [w.tag for w in expired] == [2, 1, 4, 9, 5]
    assert len(table) == 2
    assert 7 in table and 3 in table
    assert table.next_deadline() == 10.0


def test_expire_partial_and_boundary():
    table = PendingTable()
    for i in range(10):
        table.add(i, Waiter(i), float(i))
    assert table.expire(-1.0) == []
    assert [w.tag for w in table.expire(2.0)] == [0, 1, 2]  # deadline == now expires
    assert table.next_deadline() == 3.0
    assert [w.tag for w in table.expire(2.999)] == []
    assert [w.tag for w in table.expire(5.5)] == [3, 4, 5]
    assert [w.tag for w in table.expire(INF)] == [6, 7, 8, 9]
    assert len(table) == 0
    assert table.next_deadline() is None


def test_expire_never_returns_requests_without_deadline():
    table = PendingTable()
    table.add(1, Waiter(), None)
    table.add(2, Waiter(), INF)
    assert table.expire(INF) == []
    assert len(table) == 2


def test_expire_negative_infinity_deadline():
    table = PendingTable()
    waiter = Waiter()
    table.add(1, waiter, -INF)
    assert table.next_deadline() == -INF
    assert table.expire(-1e308) == [waiter]


def test_expire_refuses_nan_and_non_numbers():
    table = PendingTable()
    table.add(1, Waiter(), 1.0)
    with pytest.raises(ValueError, match="NaN"):
        table.expire(math.nan)
    with pytest.raises(TypeError):
        table.expire(None)
    with pytest.raises(TypeError):
        table.expire("2.0")
    assert len(table) == 1


def test_expire_accepts_int_now():
    table = PendingTable()
    waiter = Waiter()
    table.add(1, waiter, 2.0)
    assert table.expire(2) == [waiter]


def test_expire_on_empty_table():
    assert PendingTable().expire(1e9) == []


def test_expired_id_is_gone_and_reusable():
    table = PendingTable()
    table.add(1, Waiter(), 1.0)
    table.expire(1.0)
    assert 1 not in table
    assert table.pop(1) is None
    waiter = Waiter()
    table.add(1, waiter, 5.0)
    assert table.pop(1) is waiter


def test_next_deadline_after_pops_and_cancels():
    table = PendingTable()
    for request_id, deadline in [(1, 5.0), (2, 1.0), (3, 3.0), (4, 1.0), (5, None), (6, 4.0)]:
        table.add(request_id, Waiter(request_id), deadline)
    assert table.next_deadline() == 1.0
    table.pop(2)
    assert table.next_deadline() == 1.0  # id 4 has the same deadline
    table.cancel(4)
    assert table.next_deadline() == 3.0
    table.pop(6)  # not the minimum: a removal from the middle of the heap
    assert table.next_deadline() == 3.0
    table.cancel(3)
    assert table.next_deadline() == 5.0
    table.pop(5)  # no deadline: heap unaffected
    assert table.next_deadline() == 5.0
    table.pop(1)
    assert table.next_deadline() is None


# ---------------------------------------------------------------------------- clear


def test_clear_returns_everything_in_id_order():
    table = PendingTable()
    ids = [50, -3, 7, 2**40, 0, 12]
    for request_id in ids:
        table.add(request_id, Waiter(request_id), 1.0 if request_id % 2 else None)
    cleared = table.clear()
    assert [w.tag for w in cleared] == sorted(ids)
    assert len(table) == 0
    assert table.next_deadline() is None
    assert table.expire(INF) == []
    assert all(request_id not in table for request_id in ids)
    # Still usable, ids included.
    waiter = Waiter()
    table.add(7, waiter, 2.0)
    assert table.next_deadline() == 2.0
    assert table.pop(7) is waiter


def test_clear_empty():
    table = PendingTable()
    assert table.clear() == []
    table.add(1, Waiter())
    table.pop(1)
    assert table.clear() == []


def test_clear_after_churn():
    table = PendingTable()
    for i in range(200):
        table.add(i, Waiter(i))
    for i in range(0, 200, 3):
        table.pop(i)
    expected = [i for i in range(200) if i % 3]
    assert [w.tag for w in table.clear()] == expected


# ---------------------------------------------------------------------------- references


def refcount(obj):
    return sys.getrefcount(obj)


def test_refcount_add_pop():
    table = PendingTable()
    waiter = Waiter()
    before = refcount(waiter)
    table.add(1, waiter, 1.0)
    assert refcount(waiter) == before + 1  # the table holds one reference
    got = table.pop(1)
    del got
    assert refcount(waiter) == before


def test_refcount_add_cancel():
    table = PendingTable()
    waiter = Waiter()
    before = refcount(waiter)
    table.add(1, waiter, 1.0)
    table.cancel(1)
    assert refcount(waiter) == before


def test_refcount_add_expire():
    table = PendingTable()
    waiter = Waiter()
    before = refcount(waiter)
    table.add(1, waiter, 1.0)
    expired = table.expire(2.0)
    assert expired == [waiter]
    del expired
    assert refcount(waiter) == before


def test_refcount_add_clear():
    table = PendingTable()
    waiter = Waiter()
    before = refcount(waiter)
    table.add(1, waiter, 1.0)
    table.add(2, waiter)
    cleared = table.clear()
    assert refcount(waiter) == before + 2
    del cleared
    assert refcount(waiter) == before


def test_refcount_failed_adds():
    table = PendingTable(1)
    waiter = Waiter()
    before = refcount(waiter)
    table.add(1, Waiter())
    with pytest.raises(DuplicateRequestId):
        table.add(1, waiter)
    with pytest.raises(PendingTableFull):
        table.add(2, waiter)
    with pytest.raises(ValueError):
        table.add(3, waiter, math.nan)
    with pytest.raises(TypeError):
        table.add("3", waiter)
    assert refcount(waiter) == before


def test_refcount_unknown_pop_and_contains():
    table = PendingTable()
    probe = 12345678901
    before = refcount(probe)
    for _ in range(10):
        table.pop(probe)
        table.cancel(probe)
        assert probe not in table
    assert refcount(probe) == before


def test_dealloc_releases_waiters():
    waiter = Waiter()
    before = refcount(waiter)
    table = PendingTable()
    for i in range(100):
        table.add(i, waiter, float(i) if i % 2 else None)
    assert refcount(waiter) == before + 100
    del table
    assert refcount(waiter) == before


def test_dealloc_frees_only_referenced_waiters():
    table = PendingTable()
    refs = []
    for i in range(50):
        waiter = Waiter(i)
        refs.append(weakref.ref(waiter))
        table.add(i, waiter, 1.0)
    del waiter
    assert all(ref() is not None for ref in refs)
    del table
    assert all(ref() is None for ref in refs)


def test_many_cycles_do_not_leak():
    table = PendingTable()
    waiter = Waiter()
    before = refcount(waiter)
    for _ in range(50):
        for i in range(100):
            table.add(i, waiter, float(i % 7))
        table.expire(3.0)
        for i in range(0, 100, 2):
            table.pop(i)
        table.clear()
    assert refcount(waiter) == before


# ---------------------------------------------------------------------------- garbage collector


def test_gc_sees_waiters():
    table = PendingTable()
    waiter = Waiter()
    table.add(1, waiter)
    assert any(obj is waiter for obj in gc.get_referents(table))


def test_cycle_through_a_waiter_is_collected():
    class Session:
        pass

    session = Session()
    session.table = PendingTable()
    waiter = Waiter()
    waiter.session = session  # like a Future whose callback holds the session
    session.table.add(1, waiter, 1.0)
    session_ref, waiter_ref = weakref.ref(session), weakref.ref(waiter)
    del session, waiter
    gc.collect()
    assert session_ref() is None
    assert waiter_ref() is None


def test_finaliser_that_adds_during_collection():
    # A waiter's finaliser runs before the collector clears the table, and may add to it;
    # whatever it added is released too, with no crash.
    added = []

    class Finalised:
        def __del__(self):
            extra = Waiter("added by finaliser")
            added.append(weakref.ref(extra))
            self.table.add(999, extra)

    table = PendingTable()
    waiter = Finalised()
    waiter.table = table
    table.add(1, waiter)
    table_ref = weakref.ref(waiter)
    del table, waiter
    gc.collect()
    assert table_ref() is None
    assert len(added) == 1 and added[0]() is None


# ---------------------------------------------------------------------------- exceptions


@pytest.mark.parametrize(
    "error, attribute",
    [
        (DuplicateRequestId(42), "id"),
        (PendingTableFull(10), "capacity"),
        (IdSpaceExhausted(MAX_REQUEST_ID), "max_id"),
    ],
)
def test_exceptions_pickle(error, attribute):
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert getattr(copy, attribute) == getattr(error, attribute)
    assert str(copy) == str(error)
    assert isinstance(copy, PendingError) and isinstance(copy, Exception)


# ---------------------------------------------------------------------------- growth vs a model


class Model:
    """The table's specification: a dict for entries, heapq (lazy deletion) for deadlines."""

    def __init__(self):
        self.entries = {}  # id -> (waiter, deadline, token)
        self.heap = []  # (deadline, id, token); stale when entries[id] has another token
        self.tokens = 0

    def add(self, request_id, waiter, deadline):
        self.tokens += 1
        self.entries[request_id] = (waiter, deadline, self.tokens)
        if deadline is not None and deadline != INF:
            heapq.heappush(self.heap, (deadline, request_id, self.tokens))

    def pop(self, request_id):
        entry = self.entries.pop(request_id, None)
        return None if entry is None else entry[0]

    def _live_top(self):
        while self.heap:
            deadline, request_id, token = self.heap[0]
            entry = self.entries.get(request_id)
            if entry is not None and entry[2] == token:
                return self.heap[0]
            heapq.heappop(self.heap)
        return None

    def next_deadline(self):
        top = self._live_top()
        return None if top is None else top[0]

    def expire(self, now):
        expired = []
        while (top := self._live_top()) is not None and top[0] <= now:
            heapq.heappop(self.heap)
            expired.append(self.entries.pop(top[1])[0])
        return expired

    def clear(self):
        waiters = [self.entries[i][0] for i in sorted(self.entries)]
        self.entries.clear()
        self.heap.clear()
        return waiters


def assert_same_list(got, expected):
    assert len(got) == len(expected)
    assert all(a is b for a, b in zip(got, expected)), (got, expected)


def test_growth_with_interleaved_deletes_matches_model():
    rng = random.Random(20260728)
    table = PendingTable(capacity=200_000)
    model = Model()
    now = 0.0
    live = []
    for step in range(120_000):
        action = rng.random()
        if action < 0.55 or not live:
            request_id = table.next_id()
            deadline = rng.choice([None, now + rng.uniform(0, 50), now + rng.randint(0, 20)])
            waiter = Waiter(request_id)
            table.add(request_id, waiter, deadline)
            model.add(request_id, waiter, deadline)
            live.append(request_id)
        elif action < 0.85:
            index = rng.randrange(len(live))
            live[index], live[-1] = live[-1], live[index]
            request_id = live.pop()
            method = table.pop if action < 0.7 else table.cancel
            assert method(request_id) is model.pop(request_id)
        elif action < 0.999:
            now += rng.uniform(0, 0.5)
            expected = model.expire(now)
            assert_same_list(table.expire(now), expected)
            if expected:
                gone = {w.tag for w in expected}
                live = [i for i in live if i not in gone]
        else:
            assert_same_list(table.clear(), model.clear())
            live = []
        if step % 997 == 0:
            assert len(table) == len(model.entries)
            assert table.next_deadline() == model.next_deadline()
            assert all(i in table for i in live[-50:])
    assert len(table) == len(model.entries)
    assert_same_list(table.clear(), model.clear())


def test_colliding_and_strided_ids():
    # Ids sharing their low bits, or their high bits, all land somewhere sensible.
    table = PendingTable(capacity=100_000)
    model = Model()
    ids = [k << 32 for k in range(-3000, 3000)] + [k << 52 for k in range(-2000, 2000)]
    ids += [k for k in range(3000)] + [INT64_MIN + k for k in range(100)] + [INT64_MAX - k for k in range(100)]
    ids = list(dict.fromkeys(ids))
    rng = random.Random(7)
    rng.shuffle(ids)
    for request_id in ids:
        waiter = Waiter(request_id)
        deadline = float(rng.randint(0, 100))
        table.add(request_id, waiter, deadline)
        model.add(request_id, waiter, deadline)
    rng.shuffle(ids)
    for request_id in ids[: len(ids) // 2]:
        assert table.pop(request_id) is model.pop(request_id)
    for request_id in ids:
        assert (request_id in table) == (request_id in model.entries)
    assert_same_list(table.expire(50.0), model.expire(50.0))
    assert_same_list(table.clear(), model.clear())


def test_sliding_window_of_counter_ids_up_to_exhaustion():
    # The session's pattern: ids from next_id, a few thousand in flight, responses mostly
    # in order, some late -- run right up to the end of the id space.
    rng = random.Random(11)
    table = PendingTable(capacity=5000, first_id=MAX_REQUEST_ID - 60_000)
    model = Model()
    window = []
    now = 0.0
    while True:
        try:
            request_id = table.next_id()
        except IdSpaceExhausted:
            break
        waiter = Waiter(request_id)
        deadline = now + rng.choice([5.0, 30.0, 30.0, 60.0])
        table.add(request_id, waiter, deadline)
        model.add(request_id, waiter, deadline)
        window.append(request_id)
        now += 0.001
        while len(window) > 3000:
            index = 0 if rng.random() < 0.9 else rng.randrange(len(window))
            done = window.pop(index)
            assert table.pop(done) is model.pop(done)
        if request_id % 1000 == 0:
            expected = model.expire(now)
            assert_same_list(table.expire(now), expected)
            gone = {w.tag for w in expected}
            window = [i for i in window if i not in gone]
            assert table.next_deadline() == model.next_deadline()
    assert request_id == MAX_REQUEST_ID
    assert len(table) == len(model.entries) == len(window)
    assert_same_list(table.expire(INF), model.expire(INF))
    assert table.clear() == []


def test_negative_and_wrapping_sequences():
    table = PendingTable()
    model = Model()
    for request_id in list(range(-5000, 5000)) + list(range(INT64_MAX - 2000, INT64_MAX + 1)):
        waiter = Waiter(request_id)
        table.add(request_id, waiter, float(-request_id % 97))
        model.add(request_id, waiter, float(-request_id % 97))
    for request_id in range(-5000, 5000, 2):
        assert table.cancel(request_id) is model.pop(request_id)
    assert_same_list(table.expire(40.0), model.expire(40.0))
    assert_same_list(table.clear(), model.clear())


# ---------------------------------------------------------------------------- stateful model check

DEADLINES = st.one_of(
    st.none(),
    st.sampled_from([0.0, 1.0, 2.0, 2.5, 10.0, INF, -INF]),  # small set: plenty of ties
    st.floats(-1e6, 1e6, allow_nan=False),
    st.integers(-100, 100),
)
NOWS = st.one_of(st.sampled_from([0.0, 1.0, 2.0, 2.5, 10.0, INF, -INF]), st.floats(-1e6, 1e6, allow_nan=False))
EXPLICIT_IDS = st.one_of(
    st.integers(-5, 40),
    st.integers(INT64_MIN, INT64_MAX),
    st.integers(-8, 8).map(lambda k: k << 40),
)
FOREIGN_IDS = st.one_of(
    st.text(max_size=3),
    st.floats(allow_nan=True),
    st.booleans(),
    st.none(),
    st.integers(INT64_MAX + 1, 2**70),
    st.integers(-(2**70), INT64_MIN - 1),
)


class PendingTableMachine(RuleBasedStateMachine):
    """Random operation sequences on a PendingTable and on Model must agree."""

    capacity = 48

    def __init__(self):
        super().__init__()
        self.table = PendingTable(capacity=self.capacity)
        self.model = Model()
        self.counter = 1
        self.now = 0.0

    def _add(self, request_id, deadline):
        """Add to both; returns the error class the table raised (as the model predicts)."""
        waiter = Waiter(request_id)
        expected = None
        if request_id in self.model.entries:
            expected = DuplicateRequestId
        elif len(self.model.entries) >= self.capacity:
            expected = PendingTableFull
        if expected is None:
            self.table.add(request_id, waiter, deadline)
            self.model.add(request_id, waiter, deadline)
        else:
            with pytest.raises(expected):
                self.table.add(request_id, waiter, deadline)
        return expected

    def _known_or(self, data, ids):
        if self.model.entries and data.draw(st.booleans()):
            return data.draw(st.sampled_from(sorted(self.model.entries)))
        return data.draw(ids)

    @rule(deadline=DEADLINES)
    def add_next_id(self, deadline):
        request_id = self.table.next_id()
        assert request_id == self.counter
        self.counter += 1
        self._add(request_id, deadline)

    @rule(data=st.data(), deadline=DEADLINES)
    def add_explicit_id(self, data, deadline):
        self._add(self._known_or(data, EXPLICIT_IDS), deadline)

    @rule(data=st.data())
    def pop(self, data):
        request_id = self._known_or(data, EXPLICIT_IDS)
        assert self.table.pop(request_id) is self.model.pop(request_id)

    @rule(data=st.data())
    def cancel(self, data):
        request_id = self._known_or(data, EXPLICIT_IDS)
        assert self.table.cancel(request_id) is self.model.pop(request_id)

    @rule(foreign=FOREIGN_IDS)
    def pop_foreign(self, foreign):
        assert self.table.pop(foreign) is None
        assert self.table.cancel(foreign) is None
        assert foreign not in self.table

    @rule(now=NOWS)
    def expire(self, now):
        assert_same_list(self.table.expire(now), self.model.expire(now))

    @rule()
    def clear(self):
        assert_same_list(self.table.clear(), self.model.clear())

    @invariant()
    def agrees(self):
        assert len(self.table) == len(self.model.entries)
        assert self.table.next_deadline() == self.model.next_deadline()
        for request_id in list(self.model.entries)[:20]:
            assert request_id in self.table


class BulkPendingTableMachine(PendingTableMachine):
    """Thousands of entries: growth, rehashing and deep heaps, with interleaved deletes."""

    capacity = 20_000

    @initialize(n=st.integers(0, 3000), seed=st.integers(0, 2**32))
    def preload(self, n, seed):
        self.add_many(n, seed)

    @rule(n=st.integers(1, 4000), seed=st.integers(0, 2**32))
    def add_many(self, n, seed):
        rng = random.Random(seed)
        for _ in range(n):
            request_id = self.table.next_id()
            assert request_id == self.counter
            self.counter += 1
            deadline = rng.choice([None, float(rng.randint(-50, 50)), rng.uniform(-50, 50)])
            if self._add(request_id, deadline) is PendingTableFull:
                return

    @precondition(lambda self: self.model.entries)
    @rule(fraction=st.floats(0.0, 1.0), seed=st.integers(0, 2**32))
    def pop_many(self, fraction, seed):
        rng = random.Random(seed)
        ids = list(self.model.entries)
        for request_id in rng.sample(ids, int(len(ids) * fraction)):
            method = self.table.pop if rng.random() < 0.5 else self.table.cancel
            assert method(request_id) is self.model.pop(request_id)


TestPendingTableMachine = PendingTableMachine.TestCase
TestPendingTableMachine.settings = settings(max_examples=150, stateful_step_count=60, deadline=None)
TestBulkPendingTableMachine = BulkPendingTableMachine.TestCase
TestBulkPendingTableMachine.settings = settings(max_examples=40, stateful_step_count=30, deadline=None)
