from typing import Any, Optional

from mcpfast._core.framing import LineFramer

def use_namespace(namespace: dict[str, Any]) -> None: ...

class FrameCore:
    _gathered: Optional[list[bytes]]
    _piece: int
    _gather_room: int
    _last_write_ns: int
    _burst_until_ns: int
    _stall_written: int
    _client_side: bool
    _frames_seen: bool
    _write: Any
    _feed: Any
    _framer: LineFramer
    _waiting: Optional[list[Any]]
    _budget: Any
    _loop: Any
    @property
    def _state(self) -> Any: ...
    @_state.setter
    def _state(self, value: Any) -> None: ...
    def data_received(self, data: bytes) -> None: ...
    def _deliver_frames(self, frames: list[Any]) -> None: ...
    def send(self, frame: bytes) -> None: ...
    def _flush_gathered(self) -> None: ...
