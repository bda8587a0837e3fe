"""The transport contract: what the server and the client hand to transports fits the
Protocol classes of mcpfast.jsonrpc.contract."""

from mcpfast.client import Client
from mcpfast.jsonrpc import Connection, ConnectionFactory, ReplyChannel, Session
from mcpfast.server import Server


def test_server_connections_and_factory_fit_the_contract():
    server = Server("contract-test")
    assert isinstance(server.connect, ConnectionFactory)
    sent = []
    conn = server.connect(sent.append)
    assert isinstance(conn, Connection)
    # The session behind it is one too, and it cannot be cancelled out of initialize.
    assert isinstance(conn.session, Connection)
    assert conn.session.uncancellable == frozenset({"initialize"})
    conn.close()


def test_client_bind_fits_the_contract():
    client = Client()
    assert isinstance(client.bind, ConnectionFactory)
    conn = client.bind(lambda frame: None)
    assert isinstance(conn, Connection)
    assert client.session.uncancellable == frozenset({"initialize"})
    conn.close()


def test_a_plain_object_is_not_a_connection_or_a_channel():
    assert not isinstance(object(), Connection)
    assert not isinstance(object(), ReplyChannel)
    assert isinstance(Session(lambda frame: None), Connection)
