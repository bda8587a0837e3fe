"""Resources and templates: definitions, reads, errors, subscriptions, run-time changes."""

import asyncio
import base64
import enum

import pytest

from mcpfast.jsonrpc.errors import INTERNAL_ERROR, INVALID_PARAMS, RESOURCE_NOT_FOUND
from mcpfast.server import (
    Context,
    EmbeddedResource,
    Resource,
    ResourceNotFound,
    ResourceTemplate,
    Server,
)

ALL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")


class Kind(enum.Enum):
    SMALL = "small"
    LARGE = "large"


def resource_server():
    app = Server("res")

    @app.resource("mem://text", mime_type="text/plain", title="Text", size=5,
                  annotations={"audience": ["user"], "priority": 0.2, "lastModified": "2025-01-01T00:00:00Z"},
                  icons=[{"src": "https://example.org/t.png"}], meta={"k": 1})
    def text() -> str:
        """Some text."""
        return "hello"

    @app.resource("mem://bytes", mime_type="application/octet-stream")
    def raw() -> bytes:
        return b"\x00\x01\x02"

    @app.resource("mem://json")
    def config() -> dict:
        return {"debug": False}

    @app.resource("mem://many")
    def many() -> list:
        return [{"uri": "mem://many/1", "text": "one"},
                {"uri": "mem://many/2", "blob": base64.b64encode(b"2").decode(), "mimeType": "x/y",
                 "_meta": {"n": 2}}]

    @app.resource("mem://async")
    async def later(ctx: Context) -> str:
        await asyncio.sleep(0)
        return f"async for {ctx.client_info['name']}"

    @app.resource("mem://fails")
    def fails() -> str:
        raise OSError("disk on fire")

    @app.resource("mem://embedded")
    def embedded() -> EmbeddedResource:
        return EmbeddedResource("mem://embedded", "inner", "text/markdown")

    @app.resource("users://{user_id}/profile", mime_type="application/json", title="Profile")
    def profile(user_id: int) -> dict:
        """A user's profile."""
        if user_id == 404:
            raise ResourceNotFound(f"users://{user_id}/profile", "No such user")
        return {"id": user_id}

    @app.resource("files://{kind}/{+path}")
    def files(kind: Kind, path: str, suffix: str = "") -> str:
        return f"{kind.value}:{path}{suffix}"

    @app.resource("search://items{?q,limit}")
    async def search(q: str = "", limit: int = 10) -> str:
        return f"{q}/{limit}"

    app.add_resource("mem://static", "a static value", mime_type="text/plain", description="static")
    return app


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_resource_definitions_per_version(ready_client, version):
    client = ready_client(resource_server(), version)
    resources = {r["uri"]: r for r in client.result("resources/list")["resources"]}
    text = resources["mem://text"]
    assert text["name"] == "text" and text["mimeType"] == "text/plain"
    assert text["description"] == "Some text." and text["size"] == 5
    assert ("title" in text) == (version >= "2025-06-18")
    assert ("_meta" in text) == (version >= "2025-06-18")
    assert ("icons" in text) == (version == "2025-11-25")
    expected_annotations = {"audience": ["user"], "priority": 0.2}
    if version >= "2025-06-18":
        expected_annotations["lastModified"] = "2025-01-01T00:00:00Z"
    assert text["annotations"] == expected_annotations
    assert resources["mem://static"] == {"uri": "mem://static", "name": "mem://static",
                                         "description": "static", "mimeType": "text/plain"}
    templates = {t["uriTemplate"]: t for t in client.result("resources/templates/list")["resourceTemplates"]}
    assert set(templates) == {"users://{user_id}/profile", "files://{kind}/{+path}", "search://items{?q,limit}"}
    profile = templates["users://{user_id}/profile"]
    assert profile["name"] == "profile" and profile["description"] == "A user's profile."
    assert ("title" in profile) == (version >= "2025-06-18")


def test_reading_text_bytes_and_data(ready_client):
    client = ready_client(resource_server())
    assert client.result("resources/read", {"uri": "mem://text"}) == {
        "contents": [{"uri": "mem://text", "mimeType": "text/plain", "text": "hello"}]}
    assert client.result("resources/read", {"uri": "mem://bytes"}) == {
        "contents": [{"uri": "mem://bytes", "mimeType": "application/octet-stream",
                      "blob": base64.b64encode(b"\x00\x01\x02").decode()}]}
    assert client.result("resources/read", {"uri": "mem://json"}) == {
        "contents": [{"uri": "mem://json", "mimeType": "application/json", "text": '{"debug":false}'}]}
    assert client.result("resources/read", {"uri": "mem://static"})["contents"][0]["text"] == "a static value"
    assert client.result("resources/read", {"uri": "mem://embedded"})["contents"] == [
        {"uri": "mem://embedded", "mimeType": "text/markdown", "text": "inner"}]


@pytest.mark.parametrize("version", ["2025-03-26", "2025-11-25"])
def test_several_contents_and_meta_per_version(ready_client, version):
    client = ready_client(resource_server(), version)
    contents = client.result("resources/read", {"uri": "mem://many"})["contents"]
    assert [c["uri"] for c in contents] == ["mem://many/1", "mem://many/2"]
    assert ("_meta" in contents[1]) == (version >= "2025-06-18")


def test_templates_match_and_convert_variables(ready_client):
    client = ready_client(resource_server())
    assert client.result("resources/read", {"uri": "users://42/profile"})["contents"] == [
        {"uri": "users://42/profile", "mimeType": "application/json", "text": '{"id":42}'}]
    assert client.result("resources/read", {"uri": "files://large/a/b/c.txt"})["contents"][0]["text"] == \
        "large:a/b/c.txt"

    async def main():
        response = await client.arequest("resources/read", {"uri": "search://items?limit=3&q=cats"})
        assert response["result"]["contents"][0]["text"] == "cats/3"
        response = await client.arequest("resources/read", {"uri": "search://items"})
        assert response["result"]["contents"][0]["text"] == "/10"

    asyncio.run(main())


@pytest.mark.parametrize("uri", [
    "mem://nothing", "users://abc/profile", "users://1/profile/extra", "files://medium/x",
    "search://items?other=1", "",
])
def test_unknown_or_unfitting_uris_are_resource_not_found(ready_client, uri):
    client = ready_client(resource_server())
    error = client.error("resources/read", {"uri": uri})
    assert error["code"] == RESOURCE_NOT_FOUND == -32002
    assert error["data"] == {"uri": uri}


def test_a_function_may_raise_resource_not_found(ready_client):
    error = ready_client(resource_server()).error("resources/read", {"uri": "users://404/profile"})
    assert error == {"code": RESOURCE_NOT_FOUND, "message": "No such user",
                     "data": {"uri": "users://404/profile"}}


def test_failing_functions_are_internal_errors_naming_the_uri(ready_client):
    error = ready_client(resource_server()).error("resources/read", {"uri": "mem://fails"})
    assert error["code"] == INTERNAL_ERROR
    assert error["message"] == "Error reading resource mem://fails: disk on fire"


@pytest.mark.parametrize("params", [None, {}, {"uri": 5}, []])
def test_malformed_read_params_are_invalid_params(ready_client, params):
    assert ready_client(resource_server()).error("resources/read", params)["code"] == INVALID_PARAMS


def test_async_resource_with_context(ready_client):
    client = ready_client(resource_server(), name="reader")

    async def main():
        response = await client.arequest("resources/read", {"uri": "mem://async"})
        assert response["result"]["contents"][0]["text"] == "async for reader"

    asyncio.run(main())


def test_template_registration_checks_the_signature():
    app = Server("t")
    with pytest.raises(TypeError):
        app.add_resource("x://{a}/{b}", lambda a: a)
    with pytest.raises(TypeError):
        app.add_resource("x://{a}", lambda a, b: a)
    with pytest.raises(ValueError):
        app.add_resource("x://{a", lambda a: a)
    with pytest.raises(TypeError):
        app.add_resource("x://{a}", "not a function")
    with pytest.raises(TypeError):
        app.add_resource("x://{a}", lambda a: a, size=3)
    with pytest.raises(TypeError):
        app.add_resource("x://fixed", lambda needed: needed)
    with pytest.raises(ValueError):
        app.add_resource("", "value")
    with pytest.raises(ValueError):
        Resource("x://a", "v", size=-1)
    with pytest.raises(ValueError):
        ResourceTemplate("x://static", lambda: "v")


def test_subscriptions_and_updates(ready_client):
    app = resource_server()
    watcher = ready_client(app)
    other = ready_client(app)
    assert watcher.result("resources/subscribe", {"uri": "mem://text"}) == {}
    assert watcher.result("resources/subscribe", {"uri": "users://7/profile"}) == {}
    assert watcher.conn.subscriptions == {"mem://text", "users://7/profile"}

    assert app.notify_resource_updated("mem://text") == 1
    assert watcher.notifications() == [{"jsonrpc": "2.0", "method": "notifications/resources/updated",
                                        "params": {"uri": "mem://text"}}]
    assert other.take() == []
    assert app.notify_resource_updated("users://7/profile") == 1
    assert app.notify_resource_updated("users://8/profile") == 0
    watcher.take()

    assert watcher.result("resources/unsubscribe", {"uri": "mem://text"}) == {}
    assert watcher.result("resources/unsubscribe", {"uri": "never://subscribed"}) == {}
    assert app.notify_resource_updated("mem://text") == 0
    assert watcher.take() == []


def test_subscribing_to_an_unknown_uri_is_resource_not_found(ready_client):
    client = ready_client(resource_server())
    assert client.error("resources/subscribe", {"uri": "mem://ghost"})["code"] == RESOURCE_NOT_FOUND
    assert client.error("resources/subscribe", {})["code"] == INVALID_PARAMS
    assert client.conn.subscriptions == set()


def test_closed_connections_get_no_updates(ready_client):
    app = resource_server()
    client = ready_client(app)
    client.result("resources/subscribe", {"uri": "mem://text"})
    client.conn.close()
    assert app.notify_resource_updated("mem://text") == 0


def test_adding_and_removing_resources_notifies_and_drops_subscriptions(ready_client):
    app = resource_server()
    client = ready_client(app)
    client.result("resources/subscribe", {"uri": "mem://text"})
    client.result("resources/subscribe", {"uri": "users://1/profile"})

    app.add_resource("mem://new", "new")
    assert len(client.notifications("notifications/resources/list_changed")) == 1
    assert "mem://new" in [r["uri"] for r in client.result("resources/list")["resources"]]

    assert isinstance(app.remove_resource("mem://text"), Resource)
    assert "mem://text" not in client.conn.subscriptions
    assert isinstance(app.remove_resource("users://{user_id}/profile"), ResourceTemplate)
    assert client.conn.subscriptions == set()
    assert len(client.notifications("notifications/resources/list_changed")) == 2
    assert client.error("resources/read", {"uri": "users://1/profile"})["code"] == RESOURCE_NOT_FOUND
    with pytest.raises(KeyError):
        app.remove_resource("mem://text")


def test_introspection_views_are_read_only():
    app = resource_server()
    assert "mem://text" in app.resources and "users://{user_id}/profile" in app.resource_templates
    with pytest.raises(TypeError):
        app.resources["x"] = None  # type: ignore[index]


def test_context_reads_resources_of_its_own_server(ready_client):
    app = resource_server()

    @app.tool()
    async def quote(uri: str, ctx: Context) -> str:
        contents = await ctx.read_resource(uri)
        return contents[0]["text"]

    client = ready_client(app)

    async def main():
        assert (await client.acall_tool("quote", {"uri": "users://5/profile"}))["content"][0]["text"] == '{"id":5}'
        assert (await client.acall_tool("quote", {"uri": "mem://async"}))["content"][0]["text"].startswith("async")
        missing = await client.acall_tool("quote", {"uri": "mem://ghost"})
        assert missing["isError"] is True and "Resource not found" in missing["content"][0]["text"]

    asyncio.run(main())
