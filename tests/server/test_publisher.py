"""The fan-out seam: list changes, resource updates and log broadcasts go through a publisher."""

from __future__ import annotations

from mcpfast import Server
from mcpfast.server.publisher import ListChanged, LocalPublisher, LogMessage, ResourceUpdated


class RecordingPublisher(LocalPublisher):
    """A LocalPublisher that also records every event (a stand-in for a shared bus)."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list = []

    def publish(self, event) -> int:
        self.events.append(event)
        return super().publish(event)


def _server(publisher) -> Server:
    app = Server("pub", publisher=publisher)

    @app.tool()
    def one() -> str:
        return "1"

    @app.resource("memo://a")
    def memo() -> str:
        return "a"

    return app


def test_registry_changes_resource_updates_and_logs_are_published(ready_client):
    publisher = RecordingPublisher()
    app = _server(publisher)
    client = ready_client(app)
    client.result("resources/subscribe", {"uri": "memo://a"})
    client.take()
    publisher.events.clear()  # the registrations made while building the server

    @app.tool()
    def two() -> str:
        return "2"

    assert app.notify_resource_updated("memo://a") == 1
    assert app.broadcast_log("warning", "careful") == 1
    assert publisher.events == [ListChanged("tools"), ResourceUpdated("memo://a"),
                                LogMessage("warning", "careful", None)]
    methods = [m["method"] for m in client.notifications()]
    assert methods == ["notifications/tools/list_changed", "notifications/resources/updated",
                       "notifications/message"]


def test_each_connection_decides_what_it_wants(ready_client, make_client):
    publisher = RecordingPublisher()
    app = _server(publisher)
    subscribed = ready_client(app)
    subscribed.result("resources/subscribe", {"uri": "memo://a"})
    other = ready_client(app)
    not_initialized = make_client(app)
    assert len(publisher) == 3
    for client in (subscribed, other, not_initialized):
        client.take()
    assert app.notify_resource_updated("memo://a") == 1
    assert [m["method"] for m in subscribed.notifications()] == ["notifications/resources/updated"]
    assert other.notifications() == [] and not_initialized.notifications() == []
    app.remove_tool("one")
    assert len(subscribed.notifications("notifications/tools/list_changed")) == 1
    assert len(other.notifications("notifications/tools/list_changed")) == 1
    assert not_initialized.notifications() == []


def test_closed_connections_leave_the_publisher(ready_client):
    publisher = LocalPublisher()
    app = _server(publisher)
    client = ready_client(app)
    assert len(publisher) == 1
    client.conn.close()
    assert len(publisher) == 0
    assert app.broadcast_log("error", "nobody listens") == 0
