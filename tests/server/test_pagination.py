"""Tests for mcpfast.server.pagination: opaque HMAC-checked cursors for list methods."""

from __future__ import annotations

import base64
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpfast.server.pagination import InvalidCursor, Paginator


def collect(paginator: Paginator, items) -> list[list]:
    """All pages of ``items``, following next cursors to the end."""
    pages = []
    cursor = None
    while True:
        page, cursor = paginator.page(items, cursor)
        pages.append(page)
        if cursor is None:
            return pages
        assert len(pages) <= len(items) + 1, "pagination does not terminate"


def test_pages_in_order():
    paginator = Paginator(3)
    items = list(range(10))
    page, cursor = paginator.page(items)
    assert page == [0, 1, 2]
    assert isinstance(cursor, str) and cursor
    page, cursor = paginator.page(items, cursor)
    assert page == [3, 4, 5]
    page, cursor = paginator.page(items, cursor)
    assert page == [6, 7, 8]
    page, cursor = paginator.page(items, cursor)
    assert page == [9]
    assert cursor is None


def test_small_empty_and_exact_lists():
    paginator = Paginator(5)
    assert paginator.page([]) == ([], None)
    assert paginator.page([1, 2]) == ([1, 2], None)
    assert collect(paginator, list(range(10))) == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    assert Paginator(1).page(["a", "b"])[0] == ["a"]


def test_any_sequence_and_pages_are_lists():
    paginator = Paginator(2)
    page, cursor = paginator.page(("a", "b", "c"))
    assert page == ["a", "b"] and type(page) is list
    assert paginator.page(("a", "b", "c"), cursor) == (["c"], None)
    assert collect(paginator, range(5)) == [[0, 1], [2, 3], [4]]


def test_default_page_size():
    assert Paginator().page_size == 100


@pytest.mark.parametrize("size", [0, -1, True, 1.5, "3", None])
def test_page_size_must_be_a_positive_int(size):
    with pytest.raises(ValueError, match="page_size"):
        Paginator(size)


def test_secret_and_namespace_checks():
    with pytest.raises(ValueError, match="16 bytes"):
        Paginator(2, secret=b"short")
    with pytest.raises(ValueError, match="16 bytes"):
        Paginator(2, secret="a string secret!!")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="namespace"):
        Paginator(2, namespace=3)  # type: ignore[arg-type]


def test_cursor_is_opaque_url_safe_text():
    _, cursor = Paginator(1).page([1, 2])
    assert len(cursor) == 44
    assert set(cursor) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


# ---------------------------------------------------------------------------------------------
# invalid cursors


@pytest.mark.parametrize(
    "cursor",
    [
        "",
        "abc",
        "not a cursor at all",
        "A" * 44,
        "A" * 43,
        "A" * 45,
        "!" * 44,
        "=" * 44,
        "eyJwYWdlIjogM30=",
        "x" * 10_000,
        "\u00e9" * 44,
    ],
)
def test_garbage_cursors_are_invalid(cursor):
    with pytest.raises(InvalidCursor):
        Paginator(2).page([1, 2, 3], cursor)


@pytest.mark.parametrize("cursor", [123, 1.5, b"bytes", ["list"], {"a": 1}, True])
def test_non_string_cursors_are_invalid(cursor):
    with pytest.raises(InvalidCursor, match="string"):
        Paginator(2).page([1, 2, 3], cursor)


def test_invalid_cursor_error():
    err = InvalidCursor("x")
    assert isinstance(err, ValueError)
    assert err.code == -32602


def test_every_single_character_change_is_detected():
    paginator = Paginator(2)
    items = list(range(10))
    _, cursor = paginator.page(items)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    for position in range(len(cursor)):
        for replacement in (alphabet[(alphabet.index(cursor[position]) + 1) % 64], "A", "_"):
            if replacement == cursor[position]:
                continue
            forged = cursor[:position] + replacement + cursor[position + 1 :]
            with pytest.raises(InvalidCursor):
                paginator.page(items, forged)


def test_forged_offset_with_old_mac_is_rejected():
    paginator = Paginator(2)
    items = list(range(10))
    _, cursor = paginator.page(items)
    raw = bytearray(base64.urlsafe_b64decode(cursor))
    raw[8] = 6  # offset 2 -> 6, MAC left as it was
    forged = base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")
    assert forged != cursor
    with pytest.raises(InvalidCursor):
        paginator.page(items, forged)


def test_standard_base64_alphabet_variant_is_rejected():
    paginator = Paginator(1)
    items = list(range(200))
    cursor = None
    seen_variant = False
    for _ in range(199):
        _, cursor = paginator.page(items, cursor)
        variant = cursor.replace("-", "+").replace("_", "/")
        if variant != cursor:
            seen_variant = True
            with pytest.raises(InvalidCursor):
                paginator.page(items, variant)
    assert seen_variant


def test_cursors_are_bound_to_namespace_and_secret():
    items = list(range(10))
    tools = Paginator(2, namespace="tools/list")
    prompts = Paginator(2, namespace="prompts/list")
    _, cursor = tools.page(items)
    with pytest.raises(InvalidCursor):
        prompts.page(items, cursor)
    # Same namespace and the per-process key: another instance accepts it.
    assert Paginator(2, namespace="tools/list").page(items, cursor)[0] == [2, 3]
    secret = b"k" * 32
    a = Paginator(2, secret=secret)
    b = Paginator(2, secret=secret)
    other = Paginator(2, secret=b"z" * 32)
    _, cursor = a.page(items)
    assert b.page(items, cursor)[0] == [2, 3]
    with pytest.raises(InvalidCursor):
        other.page(items, cursor)
    with pytest.raises(InvalidCursor):
        Paginator(2).page(items, cursor)  # process key differs from the explicit secret


# ---------------------------------------------------------------------------------------------
# lists that change between pages


def test_without_item_key_a_length_change_makes_the_cursor_stale():
    paginator = Paginator(2)
    items = ["a", "b", "c", "d", "e"]
    _, cursor = paginator.page(items)
    with pytest.raises(InvalidCursor, match="stale"):
        paginator.page(items + ["f"], cursor)
    with pytest.raises(InvalidCursor, match="stale"):
        paginator.page(items[:-1], cursor)
    with pytest.raises(InvalidCursor, match="stale"):
        paginator.page([], cursor)
    page, next_cursor = paginator.page(items, cursor)
    assert page == ["c", "d"] and next_cursor is not None


def test_item_key_resumes_after_the_last_served_item():
    paginator = Paginator(2, item_key=lambda tool: tool["name"])
    tools = [{"name": n} for n in "abcdef"]
    page, cursor = paginator.page(tools)
    assert [t["name"] for t in page] == ["a", "b"]
    # Items inserted or removed before the anchor do not shift the next page.
    changed = [{"name": "0"}] + [t for t in tools if t["name"] != "a"]
    page, cursor = paginator.page(changed, cursor)
    assert [t["name"] for t in page] == ["c", "d"]
    # An item inserted after the anchor is served.
    changed = changed + [{"name": "g"}]
    page, cursor = paginator.page(changed, cursor)
    assert [t["name"] for t in page] == ["e", "f"]
    page, cursor = paginator.page(changed, cursor)
    assert [t["name"] for t in page] == ["g"] and cursor is None


def test_item_key_anchor_removed_makes_the_cursor_stale():
    paginator = Paginator(2, item_key=str)
    items = [1, 2, 3, 4, 5]
    _, cursor = paginator.page(items)
    with pytest.raises(InvalidCursor, match="stale"):
        paginator.page([1, 3, 4, 5], cursor)


def test_item_key_with_shrunken_list_ending_at_the_anchor():
    paginator = Paginator(2, item_key=str)
    _, cursor = paginator.page([1, 2, 3])
    assert paginator.page([1, 2], cursor) == ([], None)


# ---------------------------------------------------------------------------------------------
# properties


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(), max_size=60), st.integers(min_value=1, max_value=25), st.booleans())
def test_every_item_exactly_once_in_order(items, page_size, keyed):
    paginator = Paginator(page_size, item_key=(lambda x: x) if keyed else None)
    if keyed:
        items = list(dict.fromkeys(items))  # keys identify items: make them unique
    pages = collect(paginator, items)
    assert [x for page in pages for x in page] == items
    assert len(pages) == max(1, math.ceil(len(items) / page_size))
    assert all(len(page) == page_size for page in pages[:-1])
    assert 0 < len(pages[-1]) <= page_size or items == []


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=60)
       | st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
                 min_size=44, max_size=44))
def test_arbitrary_cursors_raise_invalid_cursor_and_nothing_else(cursor):
    with pytest.raises(InvalidCursor):
        Paginator(3).page(list(range(10)), cursor)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 1000), min_size=1, max_size=40, unique=True),
    st.integers(min_value=1, max_value=7),
    st.lists(st.integers(1001, 2000), max_size=10, unique=True),
)
def test_keyed_pagination_survives_insertions_before_the_anchor(items, page_size, inserted):
    """Items added at the front while paging are not served (they come before the anchor),
    and every original item is still served exactly once, in order."""
    paginator = Paginator(page_size, item_key=lambda x: x)
    current = list(items)
    served = []
    cursor = None
    pending = list(inserted)
    while True:
        page, cursor = paginator.page(current, cursor)
        served.extend(page)
        if cursor is None:
            break
        if pending:
            current.insert(0, pending.pop())
    assert served == items
