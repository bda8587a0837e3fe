"""The Python floor for MCP over HTTP: a bare uvloop + httptools server doing the job of a
stateless tools/call endpoint and nothing else, for the HTTP benchmark.

    python bench/servers/http_floor.py PORT

Per request it parses the HTTP/1.1 request (httptools, keep-alive and pipelining), decodes
the JSON-RPC body (orjson), builds the CallToolResult echoing ``params.arguments.text``,
encodes it (orjson) and writes one ``application/json`` response. No MCP checks (headers,
versions, sessions, schemas): what any Python MCP server over HTTP must at least spend.
"""

import asyncio
import sys

import httptools
import orjson
import uvloop


class Floor(asyncio.Protocol):
    __slots__ = ("transport", "parser", "body")

    def __init__(self) -> None:
        self.transport = None
        self.parser = httptools.HttpRequestParser(self)
        self.body = []

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            self.transport.write(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
            self.transport.close()

    def on_message_begin(self):
        self.body = []

    def on_body(self, chunk):
        self.body.append(chunk)

    def on_message_complete(self):
        request = orjson.loads(b"".join(self.body))
        text = request["params"]["arguments"]["text"]
        payload = orjson.dumps({"jsonrpc": "2.0", "id": request["id"],
                                "result": {"content": [{"type": "text", "text": text}]}})
        self.transport.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                             + str(len(payload)).encode() + b"\r\n\r\n" + payload)


def main(argv):
    if len(argv) != 1:
        sys.exit("usage: http_floor.py PORT")
    uvloop.install()
    loop = asyncio.new_event_loop()
    server = loop.run_until_complete(loop.create_server(Floor, "127.0.0.1", int(argv[0]), backlog=1024))
    try:
        loop.run_forever()
    finally:
        server.close()


if __name__ == "__main__":
    main(sys.argv[1:])
