"""The stdio transport: newline-delimited JSON-RPC over a process's stdin and stdout.

Server side, :func:`serve_stdio` serves one connection on this process's stdin/stdout until
EOF. stdout belongs to the protocol while it runs: frames go to a duplicate of the original
file descriptor 1, and fd 1 itself (and ``sys.stdout``) are pointed at stderr, so a stray
``print()``, a logging handler bound to stdout or a C library writing to fd 1 can never
corrupt the protocol stream. Both are restored when it returns.

Client side, :func:`open_stdio` starts a server process with pipes for its stdin and stdout
(stderr inherited, or sent to a callback or logger) and wires them to a conn. The child gets
a small safe environment (what :func:`default_environment` keeps of ours) plus ``env``.
``close()`` follows the MCP shutdown sequence: close the child's stdin, wait, then SIGTERM,
then SIGKILL (to its whole process group: the child leads a new session).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import stat
import subprocess
import sys
from typing import Any, Callable, Dict, Iterator, Mapping, Optional, Sequence, Union

from mcpfast._core.framing import DEFAULT_MAX_FRAME_SIZE
from mcpfast.transports.fdfile import FileReadTransport, FileWriteTransport, is_pollable
from mcpfast.transports.stream import (
    BACKED_UP,
    CLOSED,
    CLOSING,
    DEFAULT_MAX_WRITE_BUFFER,
    DEFAULT_WRITE_TIMEOUT,
    ENDING,
    LOGGER,
    RECEIVING,
    ConnFactory,
    FrameProtocol,
    StreamConnection,
    WriterEndProtocol,
)

__all__ = [
    "CLOSE_GRACE",
    "INHERITED_ENV_VARS",
    "ServerProcess",
    "TERMINATE_GRACE",
    "default_environment",
    "open_stdio",
    "serve_stdio",
]

#: Seconds a closing client waits for the server to exit after its stdin closed.
CLOSE_GRACE = 2.0
#: Seconds between SIGTERM and SIGKILL.
TERMINATE_GRACE = 2.0
# Seconds to wait for the exit of a process that was sent SIGKILL (only a process stuck in
# the kernel outlives it).
KILL_REAP_TIMEOUT = 2.0
# Seconds between the process's exit and its stdout's EOF (or the reverse) before the
# connection is declared gone anyway: a descendant may hold stdout open, and the exit
# status makes a better error message than "stdout closed".
EXIT_WAIT = 0.5
# Longest stderr line passed to a callback; longer lines are passed in pieces.
STDERR_LINE_LIMIT = 64 * 1024

#: Variables of this process's environment a child inherits by default (only these: the
#: environment may hold secrets meant for us, not for a tool server).
INHERITED_ENV_VARS = (
    (
        "APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT",
        "PROCESSOR_ARCHITECTURE", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME",
        "USERPROFILE",
    )
    if sys.platform == "win32"
    else ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
)

StderrTarget = Union[None, int, Any, logging.Logger, Callable[[str], Any]]


def default_environment() -> Dict[str, str]:
    """The part of os.environ a server process inherits: INHERITED_ENV_VARS that are set.

    Values starting with "()" are left out: they are exported shell functions, which a
    shell in the child would define and run.
    """
    env = {}
    for name in INHERITED_ENV_VARS:
        value = os.environ.get(name)
        if value is not None and not value.startswith("()"):
            env[name] = value
    return env


# -- server side ------------------------------------------------------------------------


@contextlib.contextmanager
def _stdout_reserved() -> Iterator[int]:
    """Point fd 1 and sys.stdout at stderr; yield a new fd writing where fd 1 wrote.

    Restores fd 1, its blocking mode and sys.stdout on exit. The yielded fd belongs to the
    caller.
    """
    saved_stdout = sys.stdout
    if saved_stdout is not None:
        with contextlib.suppress(Exception):
            saved_stdout.flush()
    blocking = os.get_blocking(1)
    protocol_fd = os.dup(1)
    original_fd = os.dup(1)
    try:
        os.dup2(2, 1)
    except OSError:
        # No stderr to send strays to: discard them.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    sys.stdout = sys.stderr
    try:
        yield protocol_fd
    finally:
        if sys.stdout is sys.stderr:
            sys.stdout = saved_stdout
        if sys.stderr is not None:
            with contextlib.suppress(Exception):
                sys.stderr.flush()
        os.dup2(original_fd, 1)
        os.close(original_fd)
        with contextlib.suppress(OSError):
            os.set_blocking(1, blocking)


def _same_socket(in_fd: int, out_fd: int) -> bool:
    """True when both fds are one socket (inetd style): it is then served as one transport."""
    a, b = os.fstat(in_fd), os.fstat(out_fd)
    return stat.S_ISSOCK(a.st_mode) and (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


async def _connect_fds(loop: asyncio.AbstractEventLoop, protocol: FrameProtocol,
                       in_fd: int, out_fd: int) -> None:
    """Connect protocol to in_fd (read) and out_fd (write); the transports own the fds."""
    if _same_socket(in_fd, out_fd):
        os.close(out_fd)
        sock = socket.socket(fileno=in_fd)
        await loop.connect_accepted_socket(lambda: protocol, sock)
        return
    writer_end = WriterEndProtocol(protocol)
    try:
        if is_pollable(out_fd):
            writer, _ = await loop.connect_write_pipe(
                lambda: writer_end, os.fdopen(out_fd, "wb", buffering=0)
            )
        else:
            writer = FileWriteTransport(loop, writer_end, out_fd)
    except BaseException:
        os.close(in_fd)
        raise
    protocol.set_writer(writer)
    try:
        if is_pollable(in_fd):
            await loop.connect_read_pipe(lambda: protocol, os.fdopen(in_fd, "rb", buffering=0))
        else:
            FileReadTransport(loop, protocol, in_fd)
    except BaseException:
        writer.abort()
        raise


async def serve_stdio(
    factory: ConnFactory,
    *,
    max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
    write_high_water: Optional[int] = None,
    max_write_buffer: int = DEFAULT_MAX_WRITE_BUFFER,
    idle_timeout: Optional[float] = None,
    write_timeout: Optional[float] = DEFAULT_WRITE_TIMEOUT,
) -> None:
    """Serve one connection, made by factory(send), on this process's stdin and stdout.

    Returns after stdin reached EOF: the last frames were fed, ``conn.close()`` was called
    and everything sent was flushed to stdout. If the reader of stdout goes away first,
    ``conn.close(exc)`` gets the error and this returns too. While it runs, fd 1 and
    sys.stdout write to stderr (the protocol has its own copy of the original stdout).
    Cancelling it drops the connection (``conn.close()``) and re-raises.

    Buffering is bounded both ways: an incomplete line by max_frame_size; above the write
    high-water mark reading stdin and handing requests over pause until stdout drains, so
    what waits for a slow reader of stdout is the replies of requests already running. A
    reader that leaves more than max_write_buffer bytes unread and reads nothing for
    write_timeout seconds (None: never) is dropped (conn.close gets PeerNotReading).
    idle_timeout: as for serve_tcp (default None: the peer is the parent process).

    Raises TypeError when factory is not callable; the factory's own exception when it
    fails.
    """
    loop = asyncio.get_running_loop()
    protocol = FrameProtocol(
        factory,
        max_frame_size=max_frame_size,
        write_high_water=write_high_water,
        max_write_buffer=max_write_buffer,
        idle_timeout=idle_timeout,
        write_timeout=write_timeout,
        log_factory_errors=False,  # raised to the caller instead
    )
    stdin_blocking = os.get_blocking(0)
    try:
        with _stdout_reserved() as out_fd:
            try:
                in_fd = os.dup(0)
            except BaseException:
                os.close(out_fd)
                raise
            await _connect_fds(loop, protocol, in_fd, out_fd)
            try:
                await asyncio.shield(protocol.closed)
            except asyncio.CancelledError:
                protocol.abort()
                raise
            if protocol.factory_error is not None:
                raise protocol.factory_error
    finally:
        with contextlib.suppress(OSError):
            os.set_blocking(0, stdin_blocking)


# -- client side ------------------------------------------------------------------------


class _StderrLines:
    """Splits a child's stderr into lines (str, without line ending) for a callback."""

    __slots__ = ("_emit", "_partial")

    def __init__(self, emit: Callable[[str], Any]) -> None:
        self._emit = emit
        self._partial = bytearray()

    def feed(self, data: bytes) -> None:
        partial = self._partial
        partial += data
        start = 0
        while True:
            end = partial.find(b"\n", start)
            if end < 0:
                break
            self._line(partial[start:end])
            start = end + 1
        del partial[:start]
        while len(partial) > STDERR_LINE_LIMIT:
            self._line(partial[:STDERR_LINE_LIMIT])
            del partial[:STDERR_LINE_LIMIT]

    def close(self) -> None:
        if self._partial:
            self._line(self._partial)
            self._partial = bytearray()

    def _line(self, raw: Union[bytes, bytearray]) -> None:
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            self._emit(raw.decode("utf-8", "replace"))
        except Exception:
            LOGGER.exception("the stderr callback raised")


def _stderr_target(stderr: StderrTarget) -> tuple:
    """(what subprocess gets as stderr, a _StderrLines or None)."""
    if stderr is None:
        return None, None
    if stderr == subprocess.STDOUT and isinstance(stderr, int):
        raise ValueError("stderr=STDOUT would mix the server's logs into the protocol stream")
    if isinstance(stderr, logging.Logger):
        logger = stderr
        return subprocess.PIPE, _StderrLines(lambda line: logger.info("%s", line))
    if isinstance(stderr, int) or hasattr(stderr, "fileno"):
        return stderr, None
    if callable(stderr):
        return subprocess.PIPE, _StderrLines(stderr)
    raise TypeError(
        "stderr must be None (inherit), a file descriptor, a file object, subprocess.DEVNULL, "
        f"a logging.Logger or a callable taking each line, not {type(stderr).__name__}"
    )


class ServerProcess:
    """The child process behind an :func:`open_stdio` connection."""

    __slots__ = ("_transport", "_exited")

    def __init__(self, transport: asyncio.SubprocessTransport, exited: asyncio.Future) -> None:
        self._transport = transport
        self._exited = exited

    @property
    def pid(self) -> int:
        return self._transport.get_pid()

    @property
    def returncode(self) -> Optional[int]:
        """The exit status once it exited (negative: killed by that signal), else None."""
        return self._transport.get_returncode()

    async def wait(self) -> int:
        """Wait for the process to exit; returns its returncode."""
        return await asyncio.shield(self._exited)

    def send_signal(self, sig: int) -> None:
        self._transport.send_signal(sig)

    def terminate(self) -> None:
        self._transport.terminate()

    def kill(self) -> None:
        self._transport.kill()

    def __repr__(self) -> str:
        return f"<ServerProcess pid={self.pid} returncode={self.returncode}>"


class _ProcessProtocol(FrameProtocol, asyncio.SubprocessProtocol):
    """FrameProtocol over a child's stdout (read) and stdin (write), plus its lifetime.

    The connection is over when the conn is closed and the process has exited.
    """

    def __init__(self, factory: ConnFactory, *, stderr_lines: Optional[_StderrLines],
                 close_grace: float, terminate_grace: float, **options: Any) -> None:
        super().__init__(factory, client_side=True, **options)
        self._process: Optional[asyncio.SubprocessTransport] = None
        self._stderr_lines = stderr_lines
        self._close_grace = close_grace
        self._terminate_grace = terminate_grace
        self.exited: asyncio.Future = asyncio.get_running_loop().create_future()
        self._gone_timer: Optional[asyncio.TimerHandle] = None
        self._stopping: Optional[asyncio.Task] = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        process: asyncio.SubprocessTransport = transport  # type: ignore[assignment]
        self._process = process
        self.set_writer(process.get_pipe_transport(0))  # type: ignore[arg-type]
        reader = process.get_pipe_transport(1)
        self._reader = reader
        if reader is not None:
            self._live.add(reader)
        self._start()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd == 1:
            self.data_received(data)
        elif self._stderr_lines is not None:
            self._stderr_lines.feed(data)

    def pipe_connection_lost(self, fd: int, exc: Optional[BaseException]) -> None:
        if fd == 1:
            self._live.discard(self._reader)
            self._stdout_ended(exc)
        elif fd == 0:
            self._write_side_gone(exc or ConnectionError("the child's stdin closed"))
        elif self._stderr_lines is not None:
            self._stderr_lines.close()

    def _write_side_gone(self, exc: BaseException) -> None:
        """The child's stdin is gone (it closed it, or exited): nothing can be sent. Its
        stdout may still hold replies, so the connection ends with stdout or the exit."""
        self._writer_gone()
        if self._state <= BACKED_UP:
            self._state = RECEIVING

    def _stdout_ended(self, exc: Optional[BaseException]) -> None:
        if self._state is ENDING or self._state is CLOSED:
            return
        if self._state >= CLOSING:
            self._close_writer()
            return
        self._state = ENDING
        if exc is None:
            self._deliver_frames(self._framer.close())
        self._close_writer()
        if exc is not None:
            self._close_conn(exc)
        elif self.exited.done():
            self._close_conn(self._peer_gone_error())
        else:
            # Give the exit a moment to be seen: its status tells the waiters more.
            self._gone_timer = asyncio.get_running_loop().call_later(EXIT_WAIT, self._peer_gone)

    def process_exited(self) -> None:
        self.exited.set_result(self._process.get_returncode())  # type: ignore[union-attr]
        if self._gone_timer is not None:
            self._gone_timer.cancel()
            self._peer_gone()
        elif self._reader in self._live:
            # stdout's EOF normally follows at once; a descendant may hold it open, though.
            self._gone_timer = asyncio.get_running_loop().call_later(EXIT_WAIT, self._stdout_abandoned)
        self._maybe_done()

    def _peer_gone(self) -> None:
        self._gone_timer = None
        self._close_conn(self._peer_gone_error())  # no-op after a local close
        self._maybe_done()

    def _stdout_abandoned(self) -> None:
        """The process exited but its stdout stays open (a descendant holds it): stop."""
        self._gone_timer = None
        reader = self._reader
        if reader is not None and reader in self._live:
            self._close_writer()
            reader.close()
        self._peer_gone()

    def _peer_gone_error(self) -> BaseException:
        code = self._process.get_returncode() if self._process is not None else None
        if code is None:
            return ConnectionError("the server process closed its stdout")
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return ConnectionError(f"the server process was killed by {name}")
        return ConnectionError(f"the server process exited with code {code}")

    def connection_lost(self, exc: Optional[BaseException]) -> None:
        """The process exited and all its pipes are closed."""
        self._writer_gone()
        self._live.clear()
        self._maybe_done()

    def _maybe_done(self) -> None:
        if self._state >= CLOSING and self.exited.done():
            self._resolve_closed()

    def abort(self) -> None:
        """Kill the process now and drop the connection."""
        self._drop_gathered()
        self._close_conn(None)
        if self._process is not None and not self.exited.done():
            self._signal(signal.SIGKILL if hasattr(signal, "SIGKILL") else signal.SIGTERM)

    async def shutdown(self, timeout: Optional[float] = None) -> None:
        """Stop the server process (MCP shutdown sequence); idempotent.

        The conn is closed first, then the child's stdin (queued writes are flushed
        first); if the child has not exited after close_grace seconds its process group
        gets SIGTERM, and after terminate_grace more, SIGKILL. The shutdown runs to its
        end even when the awaiting task is cancelled.
        """
        if self._stopping is None:
            self._stopping = asyncio.get_running_loop().create_task(self._stop())
        await asyncio.shield(self._stopping)

    async def _stop(self) -> None:
        self._close_conn(None)
        self._close_writer()
        if not await self._wait_exit(self._close_grace):
            self._signal(signal.SIGTERM)
            if not await self._wait_exit(self._terminate_grace):
                self._signal(signal.SIGKILL if hasattr(signal, "SIGKILL") else signal.SIGTERM)
                if not await self._wait_exit(KILL_REAP_TIMEOUT):
                    self._logger.warning(
                        "server process %s is still alive after SIGKILL; abandoning it",
                        self._process.get_pid(),  # type: ignore[union-attr]
                    )
        if self._gone_timer is not None:
            self._gone_timer.cancel()
            self._gone_timer = None
        # Closes our ends of the pipes too (a descendant may still hold the child's ends).
        self._process.close()  # type: ignore[union-attr]
        if self._stderr_lines is not None:
            self._stderr_lines.close()
        self._resolve_closed()

    async def _wait_exit(self, timeout: float) -> bool:
        if self.exited.done():
            return True
        try:
            await asyncio.wait_for(asyncio.shield(self.exited), timeout)
        except asyncio.TimeoutError:
            return False
        return True

    def _signal(self, sig: int) -> None:
        """Signal the child's process group (it leads one), or the child alone."""
        process = self._process
        if process is None or process.get_returncode() is not None:
            return
        if os.name == "posix":
            try:
                os.killpg(process.get_pid(), sig)
                return
            except ProcessLookupError:
                return
            except PermissionError:
                pass  # some member is not ours to signal: signal the child itself
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(sig)


async def open_stdio(
    command: Union[str, "os.PathLike[str]"],
    args: Sequence[str] = (),
    factory: Optional[ConnFactory] = None,
    *,
    env: Optional[Mapping[str, str]] = None,
    cwd: Union[str, "os.PathLike[str]", None] = None,
    stderr: StderrTarget = None,
    max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
    write_high_water: Optional[int] = None,
    max_write_buffer: int = DEFAULT_MAX_WRITE_BUFFER,
    close_grace: float = CLOSE_GRACE,
    terminate_grace: float = TERMINATE_GRACE,
) -> StreamConnection:
    """Start ``command args...`` and connect a conn, made by factory(send), to its stdio.

    env: variables added to :func:`default_environment` (not to the whole of os.environ).
    cwd: the child's working directory.
    stderr: None (the child writes to our stderr), a file descriptor / file object /
        subprocess.DEVNULL, a logging.Logger (each line logged at INFO) or a callable
        called with each line (str, no line ending).
    close_grace / terminate_grace: seconds ``close()`` waits after closing stdin, and after
        SIGTERM, before escalating.
    max_write_buffer: bytes that may wait for a server that does not read its stdin;
        beyond it send() raises WriteBufferFull (the frame is not sent, the call using it
        fails at once; the connection stays).

    When the process exits or closes its stdout, ``conn.close(ConnectionError(...))`` is
    called (the message says how it ended) so every waiter fails at once, and the returned
    connection's ``closed`` completes. ``close()`` stops the process; always call it (or
    use ``async with``). Raises OSError when the command cannot be started and whatever
    factory raises (the process is then killed).
    """
    if factory is None or not callable(factory):
        raise TypeError(f"factory must be callable, not {type(factory).__name__}")
    if isinstance(args, (str, bytes)):
        raise TypeError("args must be a sequence of strings, not a single string")
    args = [os.fspath(arg) for arg in args]
    stderr_arg, stderr_lines = _stderr_target(stderr)
    child_env = default_environment()
    if env is not None:
        child_env.update(env)
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.subprocess_exec(
        lambda: _ProcessProtocol(
            factory,
            stderr_lines=stderr_lines,
            close_grace=close_grace,
            terminate_grace=terminate_grace,
            max_frame_size=max_frame_size,
            write_high_water=write_high_water,
            max_write_buffer=max_write_buffer,
        ),
        os.fspath(command),
        *args,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr_arg,
        env=child_env,
        cwd=cwd,
        start_new_session=os.name == "posix",
    )
    if protocol.factory_error is not None:
        error = protocol.factory_error
        protocol.factory_error = None
        await protocol.shutdown()
        raise error
    return StreamConnection(protocol, ServerProcess(transport, protocol.exited))
