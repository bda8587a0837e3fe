"""Several server processes on one port: ``mcpfast run ... --transport http --workers N``.

One Python process serves from one core. The supervisor (this module, in the process the
command started) opens N listening sockets on the same port (SO_REUSEPORT: the kernel
spreads new connections over them) and starts N worker processes, each a full server
running ``mcpfast run`` with the same arguments on one of those sockets, which it inherits.
The supervisor serves nothing itself, but it keeps the sockets open: a worker that exits
(crash, restart) leaves its socket's queued connections to the next worker of that slot
instead of resetting them.

- start: a port that cannot be bound (in use, ``--port 0``: one the system picks) is said
  before any worker starts; each worker reports on a pipe once it serves. A worker that
  fails to start (an error in the server's file, Redis unreachable) stops the others:
  exit status 1.
- ``MCPFAST_SECRET``: set to a fresh random secret for the workers when the environment has
  none, so that a pagination cursor or a 2026-07-28 requestState one worker signed is
  taken by the others (:mod:`mcpfast.server.shared_secret`).
- a worker that dies is replaced (and said so on stderr); more than
  ``MAX_RESTARTS`` deaths within ``RESTART_WINDOW`` seconds stop everything (exit 1) rather
  than looping.
- SIGHUP: a rolling restart, one worker at a time: its replacement starts serving the same
  socket, then the old one is sent SIGTERM and finishes what it is answering (graceful
  shutdown) while the others keep serving; no connection is refused meanwhile.
- SIGTERM / SIGINT: every worker is sent SIGTERM and shuts down gracefully; the supervisor
  waits for them (``shutdown_timeout`` plus a margin, then SIGKILL) and exits 0.
- a supervisor that dies (even by SIGKILL) takes its workers with it: each worker holds the
  read end of a pipe whose only write end the supervisor holds; the kernel closes it when
  the supervisor goes, the worker reads EOF and shuts down as on SIGTERM
  (:func:`follow_supervisor`). A pipe rather than PR_SET_PDEATHSIG or a parent-pid watch:
  it works on every POSIX system, needs no polling, and has no window in which the
  supervisor's death goes unseen (a worker started after it died reads EOF at once).

- ``--metrics``: a scrape of ``/metrics``, whichever worker the kernel hands it to, answers
  for every worker, summed as one process would report them; a worker that is gone keeps
  its counts in the sums (:mod:`mcpfast.telemetry.worker_metrics`: each worker is linked to
  the supervisor by a socket pair, nothing on disk).

What workers do not share without Redis: everything a process keeps in memory -- 2025-era
sessions (a session lives in the worker that created it, which is why ``mcpfast run``
refuses ``--workers N`` without ``--redis`` or ``--stateless``), event stores,
subscriptions, tasks. Stateless requests
(stateless mode, every 2026-07-28 request) may land on any worker.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Any, Optional, Sequence

from mcpfast.server.shared_secret import ENVIRONMENT_VARIABLE
from mcpfast.telemetry.worker_metrics import FD_VARIABLE as METRICS_FD_VARIABLE
from mcpfast.telemetry.worker_metrics import MetricsHub

__all__ = [
    "LIFELINE_FD_VARIABLE",
    "LISTEN_FD_VARIABLE",
    "READY_FD_VARIABLE",
    "Supervisor",
    "announce_ready",
    "follow_supervisor",
]

# The environment variables telling a worker which file descriptor to report on, and which
# listening socket to serve.
READY_FD_VARIABLE = "MCPFAST_WORKER_READY_FD"
LISTEN_FD_VARIABLE = "MCPFAST_WORKER_LISTEN_FD"
# ... and which pipe ends (EOF) when the supervisor is gone.
LIFELINE_FD_VARIABLE = "MCPFAST_WORKER_LIFELINE_FD"
BACKLOG = 1024
STARTUP_TIMEOUT = 60.0
MAX_RESTARTS = 5
RESTART_WINDOW = 30.0


def announce_ready(host: str, port: int, name: str) -> bool:
    """In a worker: report listening to the supervisor (True), or do nothing (False: not a
    worker)."""
    fd = os.environ.get(READY_FD_VARIABLE)
    if not fd:
        return False
    line = json.dumps({"pid": os.getpid(), "host": host, "port": port, "name": name}) + "\n"
    try:
        os.write(int(fd), line.encode())
        os.close(int(fd))
    except OSError:
        pass
    return True


def follow_supervisor() -> bool:
    """In a worker: shut down (SIGTERM to this process: a graceful shutdown) once the
    supervisor is gone; True when watching, False when not a worker."""
    fd = os.environ.get(LIFELINE_FD_VARIABLE)
    if not fd:
        return False
    lifeline = int(fd)

    def watch() -> None:
        while True:
            try:
                if not os.read(lifeline, 1):
                    break  # EOF: the write end, the supervisor's alone, is closed
            except InterruptedError:
                continue
            except OSError:
                break
        _say(f"worker {os.getpid()}: the supervisor is gone; shutting down")
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="mcpfast-lifeline", daemon=True).start()
    return True


def _say(message: str) -> None:
    print(f"mcpfast: {message}", file=sys.stderr, flush=True)


class Worker:
    """One worker process, the slot (listening socket) it serves, and what it reported."""

    def __init__(self, process: asyncio.subprocess.Process, slot: int,
                 ready: asyncio.Future[dict]) -> None:
        self.process = process
        self.slot = slot
        self.ready = ready
        self.retiring = False

    @property
    def pid(self) -> int:
        return self.process.pid


class Supervisor:
    """Starts, watches and stops the workers (module docstring).

    ``command``: the worker's command line with ``{port}`` for the port; ``count``: how
    many; ``host``, ``port``: where to listen (port 0: the system picks one).
    """

    def __init__(self, command: Sequence[str], count: int, host: str, port: int,
                 shutdown_timeout: float = 30.0) -> None:
        if count < 1:
            raise ValueError(f"count must be >= 1, got {count}")
        self.command = list(command)
        self.count = count
        self.host = host
        self.port = port
        self.sockets: list[socket.socket] = []
        self.shutdown_timeout = shutdown_timeout
        self.workers: list[Worker] = []
        self._stopping = False
        self._deaths: list[float] = []
        self._wake: Optional[asyncio.Event] = None
        self._background: set[asyncio.Task[Any]] = set()
        # The workers' lifeline (see follow_supervisor): its write end never leaves this
        # process (os.pipe's ends are not inherited), so it closes when this process ends.
        self._lifeline: Optional[tuple[int, int]] = None
        # The workers' metrics, summed for a scrape of any of them.
        self.metrics = MetricsHub()

    def listen(self) -> None:
        """Open the listening sockets (OSError when the address cannot be bound)."""
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        try:
            for _ in range(self.count):
                sock = socket.socket(family, socket.SOCK_STREAM)
                self.sockets.append(sock)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
                sock.bind((self.host, self.port))
                sock.listen(BACKLOG)
                sock.set_inheritable(True)
                self.port = sock.getsockname()[1]  # port 0: the others take the same
        except OSError:
            for sock in self.sockets:
                sock.close()
            self.sockets.clear()
            raise

    def run(self) -> int:
        """Run until told to stop; the exit status."""
        if not self.sockets:
            self.listen()
        self._lifeline = os.pipe()
        try:
            return asyncio.run(self._main())
        finally:
            for sock in self.sockets:
                sock.close()
            for fd in self._lifeline:
                os.close(fd)
            self._lifeline = None

    def _environment(self) -> dict[str, str]:
        env = dict(os.environ)
        if not env.get(ENVIRONMENT_VARIABLE):
            env[ENVIRONMENT_VARIABLE] = secrets.token_hex(32)
        return env

    async def _spawn(self, env: dict[str, str], slot: int) -> Worker:
        loop = asyncio.get_running_loop()
        read_fd, write_fd = os.pipe()
        command = [part.replace("{port}", str(self.port)) for part in self.command]
        listen_fd = self.sockets[slot].fileno()
        assert self._lifeline is not None, "run() makes the lifeline"
        lifeline = self._lifeline[0]
        metrics, metrics_child = self.metrics.pair()
        try:
            process = await asyncio.create_subprocess_exec(
                *command, env={**env, READY_FD_VARIABLE: str(write_fd), LISTEN_FD_VARIABLE: str(listen_fd),
                               LIFELINE_FD_VARIABLE: str(lifeline),
                               METRICS_FD_VARIABLE: str(metrics_child.fileno())},
                pass_fds=(write_fd, listen_fd, lifeline, metrics_child.fileno()), stdin=subprocess.DEVNULL,
                start_new_session=True)
        except BaseException:
            metrics.close()
            raise
        finally:
            os.close(write_fd)
            # The worker holds its end now: the link closes when the worker exits.
            metrics_child.close()
        ready: asyncio.Future[dict] = loop.create_future()
        reader = os.fdopen(read_fd, "rb")

        def read_line() -> bytes:
            with reader:
                return reader.readline()

        async def wait_ready() -> None:
            line = await loop.run_in_executor(None, read_line)
            if not ready.done():
                try:
                    ready.set_result(json.loads(line))
                except ValueError:
                    ready.set_exception(RuntimeError(f"worker {process.pid} exited before listening"))

        worker = Worker(process, slot, ready)
        for coroutine in (wait_ready(), self._watch(worker, env), self.metrics.serve(metrics, str(process.pid))):
            # Referenced until done: asyncio keeps only weak references to tasks.
            task = loop.create_task(coroutine)
            self._background.add(task)
            task.add_done_callback(self._background.discard)
        return worker

    async def _started(self, worker: Worker) -> dict:
        try:
            return await asyncio.wait_for(asyncio.shield(worker.ready), STARTUP_TIMEOUT)
        except asyncio.TimeoutError:
            raise RuntimeError(f"worker {worker.pid} did not listen within {STARTUP_TIMEOUT:g} s") from None

    async def _watch(self, worker: Worker, env: dict[str, str]) -> None:
        status = await worker.process.wait()
        if not worker.ready.done():
            worker.ready.set_exception(RuntimeError(
                f"worker {worker.pid} exited with status {status} before listening"))
        if worker in self.workers:
            self.workers.remove(worker)
        if self._stopping or worker.retiring:
            return
        now = time.monotonic()
        self._deaths = [t for t in self._deaths if now - t < RESTART_WINDOW] + [now]
        if len(self._deaths) > MAX_RESTARTS:
            _say(f"workers keep exiting ({len(self._deaths)} in {RESTART_WINDOW:g} s); stopping")
            self._exit_status = 1
            self._request_stop()
            return
        _say(f"worker {worker.pid} exited with status {status}; starting another")
        try:
            replacement = await self._spawn(env, worker.slot)
            self.workers.append(replacement)
            await self._started(replacement)
        except (RuntimeError, OSError) as exc:
            _say(f"cannot start a worker: {exc}")

    def _request_stop(self) -> None:
        self._stopping = True
        if self._wake is not None:
            self._wake.set()

    async def _main(self) -> int:
        loop = asyncio.get_running_loop()
        self._exit_status = 0
        self._wake = asyncio.Event()
        restart = asyncio.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self._request_stop)
        loop.add_signal_handler(signal.SIGHUP, restart.set)
        env = self._environment()
        try:
            for slot in range(self.count):
                self.workers.append(await self._spawn(env, slot))
            reports = [await self._started(worker) for worker in list(self.workers)]
            report = reports[0]
        except (RuntimeError, OSError) as exc:
            _say(f"cannot start the workers: {exc}")
            await self._stop_all()
            return 1
        host = report["host"]
        where = f"{host}:{self.port}" if ":" not in host else f"[{host}]:{self.port}"
        _say(f"{self.count} workers of {report['name']!r} (pids "
             f"{', '.join(str(w.pid) for w in self.workers)}) listening on {where}")
        while True:
            waiting = [loop.create_task(self._wake.wait()), loop.create_task(restart.wait())]
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            for task in waiting:
                task.cancel()
            if self._stopping:
                break
            restart.clear()
            await self._rolling_restart(env)
        await self._stop_all()
        return self._exit_status

    async def _rolling_restart(self, env: dict[str, str]) -> None:
        _say(f"restarting {len(self.workers)} workers one at a time")
        for old in list(self.workers):
            if self._stopping:
                return
            try:
                new = await self._spawn(env, old.slot)
                self.workers.append(new)
                await self._started(new)
            except (RuntimeError, OSError) as exc:
                _say(f"rolling restart stopped: {exc}")
                return
            old.retiring = True
            await self._stop(old)
        _say(f"restarted: pids {', '.join(str(w.pid) for w in self.workers)}")

    async def _stop(self, worker: Worker) -> None:
        if worker.process.returncode is None:
            worker.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(worker.process.wait(), self.shutdown_timeout + 5)
            except asyncio.TimeoutError:
                worker.process.kill()
                await worker.process.wait()
        if worker in self.workers:
            self.workers.remove(worker)

    async def _stop_all(self) -> None:
        self._stopping = True
        await asyncio.gather(*(self._stop(worker) for worker in list(self.workers)))
