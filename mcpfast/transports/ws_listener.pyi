"""One WebSocket as a transport (stubs; see the compiled module's docstring)."""

from typing import Callable, Optional, final

from picows import WSFrame, WSListener, WSTransport

from mcpfast.jsonrpc.contract import Connection

PICOWS_BUILT_WITH: str

@final
class MCPListener(WSListener):
    """A WebSocket's listener, the connection made by ``factory(send)`` on connect.
    ``send(frame)``: one text frame (ConnectionError once the socket is closed)."""

    factory: Callable[[Callable[[bytes], None]], Connection]
    conn: Optional[Connection]
    max_message_size: int
    max_write_buffer: int

    def __init__(self, factory: Callable[[Callable[[bytes], None]], Connection],
                 live: Optional[set[MCPListener]] = None,
                 max_message_size: int = ..., max_write_buffer: int = ...) -> None: ...
    def going_away(self) -> None: ...
    def send(self, frame: bytes) -> None: ...
    def on_ws_connected(self, transport: WSTransport) -> None: ...
    def on_ws_frame(self, transport: WSTransport, frame: WSFrame) -> None: ...
    def on_ws_disconnected(self, transport: WSTransport) -> None: ...
    def pause_writing(self) -> None: ...
    def resume_writing(self) -> None: ...
