"""The Python floor for MCP over WebSocket, on two libraries: an echo server doing the job of
a tools/call over a text frame and nothing else, for the WebSocket rows of the HTTP benchmark
(and the measurement behind mcpfast's choice of WebSocket library).

    python bench/servers/ws_floor.py picows PORT
    python bench/servers/ws_floor.py websockets PORT

Per message: the JSON-RPC request is decoded (orjson), the CallToolResult echoing
``params.arguments.text`` built and encoded (orjson), and sent as one text frame on
ws://127.0.0.1:PORT/mcp. No MCP checks.
"""

import asyncio
import sys

import orjson
import uvloop


def answer(data: bytes) -> bytes:
    request = orjson.loads(data)
    return orjson.dumps({"jsonrpc": "2.0", "id": request["id"],
                         "result": {"content": [{"type": "text", "text": request["params"]["arguments"]["text"]}]}})


async def serve_picows(port: int) -> None:
    from picows import WSListener, WSMsgType, WSUpgradeRequest, ws_create_server

    class Echo(WSListener):
        def on_ws_frame(self, transport, frame) -> None:
            if frame.msg_type == WSMsgType.TEXT:
                transport.send(WSMsgType.TEXT, answer(frame.get_payload_as_bytes()))
            elif frame.msg_type == WSMsgType.CLOSE:
                transport.send_close(frame.get_close_code())
                transport.disconnect()

    def listener(request: WSUpgradeRequest) -> WSListener:
        return Echo()

    server = await ws_create_server(listener, "127.0.0.1", port)
    await server.serve_forever()


async def serve_websockets(port: int) -> None:
    from websockets.asyncio.server import serve

    async def echo(connection) -> None:
        async for message in connection:
            await connection.send(answer(message.encode() if isinstance(message, str) else message).decode())

    async with serve(echo, "127.0.0.1", port, compression=None):
        await asyncio.Future()


def main(argv) -> None:
    if len(argv) != 2 or argv[0] not in ("picows", "websockets"):
        sys.exit("usage: ws_floor.py picows|websockets PORT")
    uvloop.install()
    asyncio.run((serve_picows if argv[0] == "picows" else serve_websockets)(int(argv[1])))


if __name__ == "__main__":
    main(sys.argv[1:])
