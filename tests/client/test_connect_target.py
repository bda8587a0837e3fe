"""connect(): what a target means, and the errors raised before anything starts."""

import os
from pathlib import Path

import pytest

from mcpfast.client import Client, connect, parse_target
from mcpfast.client.connect import Target


@pytest.mark.parametrize("target, args, expected", [
    (["python", "server.py", "--flag"], None, ("python", ("server.py", "--flag"))),
    (("node", "s.mjs"), None, ("node", ("s.mjs",))),
    ("python server.py --name 'a b'", None, ("python", ("server.py", "--name", "a b"))),
    ("/opt/my dir/server", [], ("/opt/my dir/server", ())),
    ("uvx", ["mcp-server-time"], ("uvx", ("mcp-server-time",))),
    (Path("/usr/bin/srv"), None, ("/usr/bin/srv", ())),
    ("npx -y pkg@1 http://example.com", None, ("npx", ("-y", "pkg@1", "http://example.com"))),
])
def test_command_targets(target, args, expected):
    parsed = parse_target(target, args)
    assert parsed.kind == "stdio"
    assert (parsed.command, parsed.args) == expected


def test_path_arguments_become_strings():
    parsed = parse_target("python", [Path("/srv/s.py")])
    assert parsed.args == ("/srv/s.py",)


@pytest.mark.parametrize("url, host, port", [
    ("tcp://127.0.0.1:9000", "127.0.0.1", 9000),
    ("tcp://localhost:1/", "localhost", 1),
    ("TCP://[::1]:8080", "::1", 8080),
])
def test_tcp_targets(url, host, port):
    parsed = parse_target(url)
    assert parsed == Target("tcp", host=host, port=port, url=url)


def test_http_urls_are_streamable_http_targets():
    for url in ("http://127.0.0.1:8000/mcp", "https://example.com/mcp"):
        target = parse_target(url)
        assert (target.kind, target.url) == ("http", url)
    with pytest.raises(ValueError, match="needs a host"):
        parse_target("http:///mcp")
    with pytest.raises(TypeError, match="http"):
        connect("tcp://127.0.0.1:1", headers={"Authorization": "x"})


@pytest.mark.parametrize("url", ["ws://example.com/mcp", "wss://example.com:8443/mcp"])
def test_websocket_urls_are_websocket_targets(url):
    target = parse_target(url)
    assert target.kind == "websocket" and target.url == url
    with pytest.raises(ValueError, match="host"):
        parse_target("ws:///mcp")


@pytest.mark.parametrize("target, args, error, match", [
    ("tcp://host", None, ValueError, "host and a port"),
    ("tcp://:80", None, ValueError, "host and a port"),
    ("tcp://h:99999", None, ValueError, "port"),
    ("tcp://h:1/path", None, ValueError, "without path"),
    ("ftp://h/x", None, ValueError, "unknown URL scheme"),
    ("", None, ValueError, "empty"),
    ("   ", None, ValueError, "empty"),
    ([], None, ValueError, "empty"),
    ("", [], ValueError, "empty"),
    (["a"], ["b"], TypeError, "either"),
    ("python", "server.py", TypeError, "single string"),
    ("python", [1], TypeError, "str"),
    (42, None, TypeError, "target"),
    ("python 'unclosed", None, ValueError, "quotation"),
])
def test_bad_targets(target, args, error, match):
    with pytest.raises(error, match=match):
        parse_target(target, args)


def test_connect_checks_its_options():
    with pytest.raises(TypeError, match="server process"):
        connect("tcp://127.0.0.1:1", env={"A": "1"})
    with pytest.raises(TypeError, match="either"):
        connect(["python"], client=Client(), name="x")
    with pytest.raises(TypeError, match="Client"):
        connect(["python"], client=object())
    with pytest.raises(TypeError):
        connect(["python"], no_such_option=1)


def test_a_connector_is_used_once(arun):
    connector = connect(["definitely-not-a-command-mcpfast"])
    assert "stdio" in repr(connector)

    async def main():
        with pytest.raises(OSError):
            await connector
        with pytest.raises(RuntimeError, match="already used"):
            await connector

    arun(main())


def test_an_unstartable_command_raises_oserror(arun, tmp_path):
    script = tmp_path / "not_executable.sh"
    script.write_text("#!/bin/sh\n")
    os.chmod(script, 0o600)

    async def main():
        with pytest.raises(PermissionError):
            async with connect([str(script)]):
                pass
        with pytest.raises(FileNotFoundError):
            async with connect("mcpfast-no-such-program --x"):
                pass

    arun(main())


def test_tcp_connection_refused_raises_oserror(arun):
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    async def main():
        with pytest.raises(OSError):
            await connect(f"tcp://127.0.0.1:{port}")

    arun(main())
