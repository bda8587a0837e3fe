"""Pagination: list_* follows nextCursor; list_*_page returns one page."""

import pytest

from mcpfast.client import InvalidResult, PaginationError

# (list method name, page method name, request method, result key, an item maker)
LISTS = [
    ("list_tools", "list_tools_page", "tools/list", "tools",
     lambda i: {"name": f"t{i}", "inputSchema": {"type": "object"}}),
    ("list_resources", "list_resources_page", "resources/list", "resources",
     lambda i: {"uri": f"file:///r{i}", "name": f"r{i}"}),
    ("list_resource_templates", "list_resource_templates_page", "resources/templates/list",
     "resourceTemplates", lambda i: {"uriTemplate": f"file:///t{i}/{{x}}", "name": f"t{i}"}),
    ("list_prompts", "list_prompts_page", "prompts/list", "prompts",
     lambda i: {"name": f"p{i}"}),
]


def _paged(key, make, total, size):
    """A handler serving total items, size per page, with cursors "c<start>"."""

    def handler(params, ctx):
        cursor = (params or {}).get("cursor")
        start = 0 if cursor is None else int(cursor[1:])
        page = {key: [make(i) for i in range(start, min(start + size, total))]}
        if start + size < total:
            page["nextCursor"] = f"c{start + size}"
        return page

    return handler


@pytest.mark.parametrize("list_name, page_name, method, key, make", LISTS,
                         ids=[entry[2] for entry in LISTS])
def test_all_pages_are_fetched(fake, arun, mcp_schema, list_name, page_name, method, key, make):
    server = fake()
    server.router.add_request_handler(method, _paged(key, make, total=7, size=3))

    async def main():
        client = await server.connect()
        items = await getattr(client, list_name)()
        assert items == [make(i) for i in range(7)]
        requests = server.sent(method)
        assert [r.get("params") for r in requests] == [None, {"cursor": "c3"}, {"cursor": "c6"}]
        server.check_schema(mcp_schema)

    arun(main())


@pytest.mark.parametrize("list_name, page_name, method, key, make", LISTS,
                         ids=[entry[2] for entry in LISTS])
def test_page_by_page(fake, arun, list_name, page_name, method, key, make):
    server = fake()
    server.router.add_request_handler(method, _paged(key, make, total=5, size=2))

    async def main():
        client = await server.connect()
        page_method = getattr(client, page_name)
        first = await page_method()
        assert first == {key: [make(0), make(1)], "nextCursor": "c2"}
        second = await page_method(first["nextCursor"])
        assert second[key] == [make(2), make(3)]
        last = await page_method(second["nextCursor"])
        assert last == {key: [make(4)]}
        with pytest.raises(TypeError):
            await page_method(7)

    arun(main())


def test_a_single_page_without_cursor(fake, arun):
    server = fake()
    server.router.add_request_handler("tools/list", lambda p, c: {"tools": []})

    async def main():
        client = await server.connect()
        assert await client.list_tools() == []
        assert len(server.sent("tools/list")) == 1

    arun(main())


def test_a_repeated_cursor_stops_with_pagination_error(fake, arun):
    server = fake()
    server.router.add_request_handler(
        "prompts/list", lambda p, c: {"prompts": [{"name": "p"}], "nextCursor": "again"})

    async def main():
        client = await server.connect()
        with pytest.raises(PaginationError) as info:
            await client.list_prompts()
        assert info.value.cursor == "again" and info.value.method == "prompts/list"
        # The first page, then the cursor once; its repetition is caught before a third.
        assert len(server.sent("prompts/list")) == 2

    arun(main())


@pytest.mark.parametrize("page, problem", [
    (["x"], "expected an object"),
    ({}, "'tools' must be an array"),
    ({"tools": {}}, "'tools' must be an array"),
    ({"tools": [], "nextCursor": 5}, "nextCursor"),
])
def test_malformed_pages_are_invalid_results(fake, arun, page, problem):
    server = fake()
    server.router.add_request_handler("tools/list", lambda p, c: page)

    async def main():
        client = await server.connect()
        with pytest.raises(InvalidResult, match=problem) as info:
            await client.list_tools()
        assert info.value.method == "tools/list"
        with pytest.raises(InvalidResult):
            await client.list_tools_page()

    arun(main())
