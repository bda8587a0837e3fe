"""Every worker's metrics on one scrape: ``mcpfast run ... --transport http --metrics
--workers N``.

Each worker keeps its own :class:`~mcpfast.telemetry.prometheus.PrometheusMetrics`; the
kernel hands a scrape of ``/metrics`` to any one of them. That worker answers for all of
them, merged the way a single process would report them -- what Prometheus users get from
prometheus_client's multiprocess mode under gunicorn, and what a dashboard written for one
process expects: per label set, the histograms' counts and sums added up over the workers,
the gauges (requests in flight, open sessions and connections) added up over the workers
alive, no worker label.

How: the supervisor holds one end of a socket pair per worker (:class:`MetricsHub`); the
worker's end (:class:`WorkerLink`, its descriptor in ``MCPFAST_WORKER_METRICS_FD``) is
served by a thread of the worker, so it answers even while its event loop is busy. A
scrape sends the worker's own numbers to the supervisor, which asks every other worker for
theirs (``ASK_TIMEOUT`` each: one that does not answer counts with the numbers it gave
last), adds them to those of the workers that are gone and sends the sum back; the route
renders it. No file, no shared memory: nothing is left behind, whatever ends how.

A worker that is gone (crashed, replaced, restarted with SIGHUP) keeps its counts in the
sum: the last numbers the supervisor had from it (a worker that stops gracefully sends its
final ones), so that a counter never goes down -- a sum that fell would look like a
counter reset to Prometheus, and rate() would count the whole total again. Its gauges
leave the sum (what it had open is closed). Counts a crashed worker made after the last
scrape are lost, as they would be for a single process. Bounded: the sum of the workers
that are gone keeps at most ``max_series`` label sets per histogram (more count as
dropped), and the supervisor holds one snapshot per live worker.
"""

from __future__ import annotations

import asyncio
import atexit
import itertools
import json
import logging
import os
import socket
import struct
import threading
from typing import Any, Optional

from mcpfast.telemetry.prometheus import DEFAULT_MAX_SERIES, PrometheusMetrics, Snapshot, merge_snapshots

__all__ = ["ASK_TIMEOUT", "FD_VARIABLE", "GATHER_TIMEOUT", "MetricsHub", "WorkerLink", "worker_link"]

_LOGGER = logging.getLogger("mcpfast.telemetry")

# The environment variable naming a worker's end of its socket pair.
FD_VARIABLE = "MCPFAST_WORKER_METRICS_FD"
# Seconds the supervisor waits for one worker's numbers; a worker for the merged answer.
ASK_TIMEOUT = 2.0
GATHER_TIMEOUT = 10.0
# Frames: a 4-byte big-endian length, then one JSON object.
_LENGTH = struct.Struct(">I")
MAX_FRAME = 256 * 1024 * 1024


def _frame(message: dict) -> bytes:
    data = json.dumps(message, separators=(",", ":")).encode()
    return _LENGTH.pack(len(data)) + data


def _decoded(data: bytes) -> Optional[dict]:
    try:
        message = json.loads(data)
    except ValueError:
        return None
    return message if type(message) is dict else None


# -- the worker's side ------------------------------------------------------------------


class WorkerLink:
    """A worker's end (module docstring): ``gather()`` is the merged snapshot of every
    worker (None when the supervisor does not answer); a thread answers the supervisor's
    requests for this worker's numbers."""

    def __init__(self, sock: socket.socket, metrics: PrometheusMetrics) -> None:
        self.metrics = metrics
        self._sock = sock
        self._send_lock = threading.Lock()
        self._ids = itertools.count(1)
        # Scrapes waiting for their merged answer: id -> (loop, future).
        self._waiting: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Future[Any]]] = {}
        self._closed = False
        threading.Thread(target=self._serve, name="mcpfast-worker-metrics", daemon=True).start()

    async def gather(self) -> Optional[Snapshot]:
        """Every worker's numbers, merged (this one's sent along); None when the
        supervisor is out of reach or does not answer within ``GATHER_TIMEOUT``."""
        loop = asyncio.get_running_loop()
        ident = next(self._ids)
        future: asyncio.Future[Any] = loop.create_future()
        self._waiting[ident] = (loop, future)
        try:
            if not self._send({"op": "scrape", "id": ident, "data": self.metrics.snapshot()}):
                return None
            return await asyncio.wait_for(future, GATHER_TIMEOUT)
        except asyncio.TimeoutError:
            _LOGGER.warning("the supervisor did not answer a metrics scrape in %g s", GATHER_TIMEOUT)
            return None
        finally:
            self._waiting.pop(ident, None)

    def final(self) -> None:
        """This worker's last numbers to the supervisor (at exit: kept once it is gone)."""
        self._send({"op": "final", "data": self.metrics.snapshot()})

    def _send(self, message: dict) -> bool:
        if self._closed:
            return False
        try:
            with self._send_lock:
                self._sock.sendall(_frame(message))
        except OSError:
            self._closed = True
            return False
        return True

    def _serve(self) -> None:
        while True:
            message = self._receive()
            if message is None:
                break
            op = message.get("op")
            if op == "snapshot":
                self._send({"op": "snapshot", "id": message.get("id"), "data": self.metrics.snapshot()})
            elif op == "merged":
                waiting = self._waiting.get(message.get("id"))  # type: ignore[arg-type]
                if waiting is not None:
                    loop, future = waiting
                    loop.call_soon_threadsafe(_resolve, future, message.get("data"))
        self._closed = True
        for loop, future in list(self._waiting.values()):
            loop.call_soon_threadsafe(_resolve, future, None)

    def _receive(self) -> Optional[dict]:
        head = self._read_exactly(_LENGTH.size)
        if head is None:
            return None
        size = _LENGTH.unpack(head)[0]
        if size > MAX_FRAME:
            return None
        data = self._read_exactly(size)
        return _decoded(data) if data is not None else None

    def _read_exactly(self, size: int) -> Optional[bytes]:
        chunks = []
        while size:
            try:
                chunk = self._sock.recv(min(size, 1 << 20))
            except InterruptedError:
                continue
            except OSError:
                return None
            if not chunk:
                return None
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)


def _resolve(future: asyncio.Future[Any], value: Any) -> None:
    if not future.done():
        future.set_result(value)


_LINK: Optional[WorkerLink] = None


def worker_link(metrics: PrometheusMetrics) -> Optional[WorkerLink]:
    """In a worker of ``mcpfast run --workers``: its link to the supervisor, serving
    ``metrics`` (made once per process); None elsewhere."""
    global _LINK
    if _LINK is not None:
        return _LINK
    fd = os.environ.pop(FD_VARIABLE, None)
    if not fd:
        return None
    try:
        sock = socket.socket(fileno=int(fd))
    except (OSError, ValueError) as exc:
        _LOGGER.warning("%s=%r is not a socket (%s): this worker's scrapes see it alone", FD_VARIABLE, fd, exc)
        return None
    sock.set_inheritable(False)
    _LINK = WorkerLink(sock, metrics)
    atexit.register(_LINK.final)
    return _LINK


# -- the supervisor's side --------------------------------------------------------------


class _Peer:
    """The supervisor's end of one worker's link."""

    __slots__ = ("name", "writer", "latest", "asked")

    def __init__(self, name: str, writer: asyncio.StreamWriter) -> None:
        self.name = name
        self.writer = writer
        # The newest numbers the worker gave (None: none yet).
        self.latest: Optional[Snapshot] = None
        # Requests for its numbers waiting for the answer: id -> future.
        self.asked: dict[int, asyncio.Future[Any]] = {}


class MetricsHub:
    """The supervisor's side (module docstring): ``pair()`` before starting a worker (the
    child's end goes to the worker, inherited), ``serve(parent_end, name)`` after, until
    the worker's end closes (it exited); :meth:`merged` is what a scrape answers."""

    def __init__(self, max_series: int = DEFAULT_MAX_SERIES) -> None:
        self.max_series = max_series
        self._peers: list[_Peer] = []
        # The numbers of the workers that are gone: histograms and dropped, no gauges.
        self._retired: Snapshot = merge_snapshots((), gauges=False, max_series=max_series)
        self._ids = itertools.count(1)
        self._tasks: set[asyncio.Task[Any]] = set()

    @staticmethod
    def pair() -> tuple[socket.socket, socket.socket]:
        """A socket pair: (the supervisor's end, the worker's end, inheritable)."""
        parent, child = socket.socketpair()
        child.set_inheritable(True)
        return parent, child

    def merged(self) -> Snapshot:
        """The sum of what every worker gave last and of the workers that are gone."""
        live = [peer.latest for peer in self._peers if peer.latest is not None]
        return merge_snapshots([self._retired, *live], max_series=self.max_series * (len(live) + 1))

    async def serve(self, sock: socket.socket, name: str) -> None:
        """Serve one worker's link until it closes; then its numbers join the retired."""
        reader, writer = await asyncio.open_unix_connection(sock=sock, limit=1 << 20)
        peer = _Peer(name, writer)
        self._peers.append(peer)
        try:
            while True:
                message = await _read_frame(reader)
                if message is None:
                    break
                op = message.get("op")
                data = message.get("data")
                if op in ("scrape", "final", "snapshot") and type(data) is dict:
                    peer.latest = data
                if op == "scrape":
                    task = asyncio.get_running_loop().create_task(self._answer(peer, message.get("id")))
                    self._tasks.add(task)
                    task.add_done_callback(self._tasks.discard)
                elif op == "snapshot":
                    future = peer.asked.pop(message.get("id"), None)  # type: ignore[arg-type]
                    if future is not None and not future.done():
                        future.set_result(None)
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            self._retire(peer)

    async def _answer(self, peer: _Peer, ident: Any) -> None:
        # The others' numbers now (a worker that does not answer: its last ones), merged.
        await asyncio.gather(*(self._ask(other) for other in list(self._peers) if other is not peer))
        if peer in self._peers:
            self._write(peer, {"op": "merged", "id": ident, "data": self.merged()})

    async def _ask(self, peer: _Peer) -> None:
        ident = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        peer.asked[ident] = future
        self._write(peer, {"op": "snapshot", "id": ident})
        try:
            await asyncio.wait_for(future, ASK_TIMEOUT)
        except asyncio.TimeoutError:
            _LOGGER.warning("worker %s did not give its metrics in %g s: its last ones count", peer.name, ASK_TIMEOUT)
        finally:
            peer.asked.pop(ident, None)

    def _write(self, peer: _Peer, message: dict) -> None:
        try:
            peer.writer.write(_frame(message))
        except (OSError, RuntimeError):
            pass  # closing: its reader ends and retires it

    def _retire(self, peer: _Peer) -> None:
        if peer not in self._peers:
            return
        self._peers.remove(peer)
        if peer.latest is not None:
            self._retired = merge_snapshots([self._retired, peer.latest], gauges=False, max_series=self.max_series)
        for future in peer.asked.values():
            if not future.done():
                future.set_result(None)
        peer.writer.close()


async def _read_frame(reader: asyncio.StreamReader) -> Optional[dict]:
    try:
        head = await reader.readexactly(_LENGTH.size)
        size = _LENGTH.unpack(head)[0]
        if size > MAX_FRAME:
            return None
        return _decoded(await reader.readexactly(size))
    except asyncio.IncompleteReadError:
        return None
