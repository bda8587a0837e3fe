"""The HTTP/1.1 client connection's per-answer work in C (stubs; the compiled module's
docstring says more)."""

from typing import Any, Optional

from mcpfast.transports.http.response_reader import ResponseReader

class ClientConnectionCore:
    """ClientConnection's fields and its per-answer methods."""

    transport: Optional[Any]
    reader: ResponseReader
    lost: bool

    def data_received(self, data: bytes) -> None: ...
    def send(self, data: bytes, answer: Any) -> None:
        """Write a request; its answer goes to ``answer`` (an AnswerSink)."""
    def close(self) -> None:
        """Close the connection (not reused)."""
