"""Transports over file descriptors the event loop cannot watch: regular files, /dev/null.

epoll refuses regular files and some character devices (``server < requests.jsonl``,
``server < /dev/null > out.jsonl``), and the loops' pipe transports refuse them too. Such
descriptors never make a reader wait for a peer, so reading them in a worker thread and
writing them with plain blocking writes is correct and cheap. These transports feed the
same protocol methods the pipe transports do.
"""

from __future__ import annotations

import asyncio
import os
import stat
from typing import Any, Optional

__all__ = ["FileReadTransport", "FileWriteTransport", "is_pollable"]

# Bytes read per call from a file (asyncio's pipe transports read at most 256 KiB too).
READ_SIZE = 256 * 1024


def is_pollable(fd: int) -> bool:
    """True when the loop's pipe transports can watch fd: a pipe, a socket or a terminal."""
    mode = os.fstat(fd).st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        return True
    return stat.S_ISCHR(mode) and os.isatty(fd)


class FileReadTransport(asyncio.ReadTransport):
    """Reads fd in a worker thread and hands the chunks to protocol.data_received.

    Calls protocol.connection_made(self) first, eof_received() at end of file, then
    connection_lost(exc). Owns fd (closes it when done).
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, protocol: asyncio.Protocol, fd: int) -> None:
        super().__init__()
        self._loop = loop
        self._protocol = protocol
        self._fd = fd
        self._closing = False
        self._resumed = asyncio.Event()
        self._resumed.set()
        protocol.connection_made(self)
        self._task = loop.create_task(self._pump())

    async def _pump(self) -> None:
        exc: Optional[Exception] = None
        try:
            while not self._closing:
                await self._resumed.wait()
                if self._closing:
                    break
                data = await self._loop.run_in_executor(None, os.read, self._fd, READ_SIZE)
                if self._closing:
                    break
                if not data:
                    self._protocol.eof_received()
                    break
                self._protocol.data_received(data)
        except asyncio.CancelledError:
            pass
        except OSError as error:
            exc = error
        finally:
            self._closing = True
            os.close(self._fd)
            self._protocol.connection_lost(exc)

    def is_reading(self) -> bool:
        return not self._closing and self._resumed.is_set()

    def pause_reading(self) -> None:
        self._resumed.clear()

    def resume_reading(self) -> None:
        self._resumed.set()

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        if not self._closing:
            self._closing = True
            # Wake a paused pump so it can finish; a read in progress completes first.
            self._resumed.set()

    def abort(self) -> None:
        self.close()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default


class FileWriteTransport(asyncio.WriteTransport):
    """Writes to fd with blocking writes (a file never leaves a writer waiting on a peer).

    Nothing is ever buffered, so flow control never pauses. Calls
    protocol.connection_lost(exc) (soon) after close() or a failed write. Owns fd.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop, protocol: asyncio.BaseProtocol, fd: int) -> None:
        super().__init__()
        self._loop = loop
        self._protocol = protocol
        self._fd = fd
        self._closing = False
        os.set_blocking(fd, True)
        protocol.connection_made(self)

    def write(self, data: Any) -> None:
        if self._closing:
            return
        view = memoryview(data)
        try:
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
        except OSError as exc:
            self._shut(exc)

    def writelines(self, list_of_data: Any) -> None:
        self.write(b"".join(list_of_data))

    def can_write_eof(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return 0

    def get_write_buffer_limits(self) -> tuple:
        return (0, 0)

    def set_write_buffer_limits(self, high: Optional[int] = None, low: Optional[int] = None) -> None:
        """Accepted and ignored: writes complete at once, nothing is ever buffered."""

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._shut(None)

    def abort(self) -> None:
        self._shut(None)

    def _shut(self, exc: Optional[Exception]) -> None:
        if self._closing:
            return
        self._closing = True
        os.close(self._fd)
        self._loop.call_soon(self._protocol.connection_lost, exc)

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return default
