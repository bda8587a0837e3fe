"""Pagination of the four list methods through the server: cursors, bad cursors, changes."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcpfast.jsonrpc.errors import INVALID_PARAMS
from mcpfast.server import Server

LISTS = [
    ("tools/list", "tools", "name"),
    ("resources/list", "resources", "uri"),
    ("resources/templates/list", "resourceTemplates", "uriTemplate"),
    ("prompts/list", "prompts", "name"),
]


def many_server(count, page_size):
    app = Server("many", page_size=page_size)
    for i in range(count):
        app.add_tool(lambda: "x", name=f"tool_{i:03d}")
        app.add_resource(f"mem://r/{i}", f"value {i}")
        app.add_resource(f"mem://t{i}/{{id}}", lambda id: id, name=f"template_{i}")
        app.add_prompt(lambda: "p", name=f"prompt_{i:03d}")
    return app


def walk(client, method, key, field):
    seen, cursor, pages = [], None, 0
    while True:
        result = client.result(method, {"cursor": cursor} if cursor is not None else None)
        seen.extend(item[field] for item in result[key])
        pages += 1
        cursor = result.get("nextCursor")
        if cursor is None:
            return seen, pages
        assert isinstance(cursor, str) and cursor


@pytest.mark.parametrize("method, key, field", LISTS)
def test_every_list_pages_through_everything(ready_client, method, key, field):
    client = ready_client(many_server(7, 3))
    seen, pages = walk(client, method, key, field)
    assert len(seen) == 7 and len(set(seen)) == 7
    assert pages == 3


@pytest.mark.parametrize("method, key, field", LISTS)
def test_unpaginated_lists_are_one_page_without_cursor(ready_client, method, key, field):
    client = ready_client(many_server(7, None))
    result = client.result(method)
    assert len(result[key]) == 7 and "nextCursor" not in result
    error = client.error(method, {"cursor": "anything"})
    assert error["code"] == INVALID_PARAMS and "not paginated" in error["message"]


@pytest.mark.parametrize("cursor", ["garbage", "", "A" * 44, 5, ["x"]])
def test_bad_cursors_are_invalid_params(ready_client, cursor):
    client = ready_client(many_server(5, 2))
    error = client.error("tools/list", {"cursor": cursor})
    assert error["code"] == INVALID_PARAMS
    assert error["message"].startswith("Invalid cursor for tools/list")


def test_a_cursor_belongs_to_its_list(ready_client):
    client = ready_client(many_server(5, 2))
    cursor = client.result("tools/list")["nextCursor"]
    assert client.error("prompts/list", {"cursor": cursor})["code"] == INVALID_PARAMS
    assert client.result("tools/list", {"cursor": cursor})["tools"][0]["name"] == "tool_002"


def test_pages_follow_the_anchor_when_the_list_changes(ready_client):
    app = many_server(6, 2)
    client = ready_client(app)
    first = client.result("tools/list")
    assert [t["name"] for t in first["tools"]] == ["tool_000", "tool_001"]
    app.remove_tool("tool_000")
    client.notifications()
    second = client.result("tools/list", {"cursor": first["nextCursor"]})
    assert [t["name"] for t in second["tools"]] == ["tool_002", "tool_003"]
    app.remove_tool("tool_003")
    client.notifications()
    assert client.error("tools/list", {"cursor": second["nextCursor"]})["code"] == INVALID_PARAMS


def test_empty_lists(ready_client):
    client = ready_client(Server("empty", page_size=2))
    for method, key, _ in LISTS:
        assert client.result(method) == {key: []}


@given(count=st.integers(0, 12), page_size=st.integers(1, 5))
@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
def test_paging_property(ready_client, count, page_size):
    client = ready_client(many_server(count, page_size))
    seen, pages = walk(client, "tools/list", "tools", "name")
    assert seen == [f"tool_{i:03d}" for i in range(count)]
    assert pages == max(1, -(-count // page_size))
    client.conn.close()
