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


class _Subscriber:
    def __init__(self, parked: bool = False) -> None:
        self.parked = parked
        self.events: list = []

    def deliver(self, event) -> bool:
        self.events.append(event)
        return True


def test_parked_subscribers_are_skipped_and_not_counted():
    publisher = LocalPublisher()
    awake, parked, plain = _Subscriber(), _Subscriber(parked=True), RecordingPublisher()
    publisher.attach(awake)
    publisher.attach(parked)
    assert len(publisher) == 1 and publisher.publish(ListChanged("tools")) == 1
    assert awake.events == [ListChanged("tools")] and parked.events == []
    parked.parked = False
    assert len(publisher) == 2 and publisher.publish(ListChanged("tools")) == 2
    assert parked.events == [ListChanged("tools")]
    assert "subscribers=2" in repr(publisher) and plain.skips_parked


class _PlainPublisher:
    """A publisher that knows nothing of parked subscribers (no ``skips_parked``)."""

    def __init__(self) -> None:
        self.subscribers: dict = {}

    def attach(self, subscriber) -> None:
        self.subscribers[subscriber] = None

    def detach(self, subscriber) -> None:
        self.subscribers.pop(subscriber, None)

    def publish(self, event) -> int:
        return sum(1 for subscriber in tuple(self.subscribers) if subscriber.deliver(event))


def test_a_recycled_connection_hears_nothing_while_parked():
    # With a publisher that skips parked subscribers the connection stays attached; with
    # any other it is detached while parked. Either way it hears nothing then.
    for publisher in (LocalPublisher(), _PlainPublisher()):
        app = _server(publisher)
        connection = app.connect_stateless(lambda frame: None, "2025-11-25")
        sent: list = []

        def send_log(level, data, logger=None, sent=sent) -> bool:
            sent.append(data)
            return True

        connection.send_log = send_log  # type: ignore[method-assign]
        assert app.broadcast_log("error", "one") == 1 and sent == ["one"]
        assert connection.recycle() is True
        attached = connection in getattr(publisher, "subscribers", getattr(publisher, "_subscribers", {}))
        assert attached is isinstance(publisher, LocalPublisher)
        assert app.broadcast_log("error", "two") == 0 and sent == ["one"]
        assert connection not in app.connections
        connection.revive()
        assert app.broadcast_log("error", "three") == 1 and sent == ["one", "three"]
        connection.close()
        assert app.broadcast_log("error", "four") == 0
        assert connection not in getattr(publisher, "subscribers", getattr(publisher, "_subscribers", {}))
