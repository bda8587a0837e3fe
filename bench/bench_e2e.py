"""End-to-end benchmark: tools/call round trips between a real client and server process.

Pairs (each a client in this process and a server subprocess with one ``echo`` tool):
- official: the official ``mcp`` SDK -- ``mcp.server.MCPServer`` (bench/servers/official_echo.py)
  driven by ``mcp.ClientSession`` over ``mcp.client.stdio.stdio_client`` or
  ``mcp.client.streamable_http.streamable_http_client``.  The SDK has no TCP transport: its TCP
  rows are reported as unsupported, never substituted.
- mcpfast: ``mcpfast.Server`` (bench/servers/mcpfast_echo.py) driven by ``mcpfast.connect``.
  Until the package exports both, its rows are reported as "not available yet".
- telemetry, over stdio only: mcpfast-otel (the same mcpfast pair, the server's spans and
  metrics on: the OpenTelemetry SDK configured by bench/servers/otel_setup.py, a batch span
  processor), official-otel / official-otel-off (the official pair under the same SDK set-up,
  its span middleware on / removed). Their other transports are reported as unsupported.

Transports: stdio, tcp (newline-framed JSON-RPC over a loopback socket), http (Streamable HTTP
on 127.0.0.1, the 2025-11-25 handshake), http2026 (Streamable HTTP at 2026-07-28: every
request self-contained, no session; the official SDK's ``mcp.client.client.Client`` in its
"auto" mode, which discovers the revision, against mcpfast's ``protocol_version="2026-07-28"``).
For each pair and transport, with 1 (sequential), 16 and 256 calls in flight, one pyperf
benchmark ``e2e/<transport>/in_flight_<n>/rt/<impl>`` times the calls: wall seconds per
completed call (the report shows round trips per second).  One pyperf loop is ``n`` calls
(``inner_loops=n``): ``n`` client tasks each make ``loops`` sequential calls, so ``n`` requests
stay outstanding.

The same calls also give, per pyperf value, the median and 99th-percentile latency of its calls
and the CPU seconds (client process + server process, user + system) per call.  A worker writes
these, for its measured values only (not warmups, not loop calibration), with pyperf's API into
the ``--detail-output`` file as benchmarks ``e2e/<transport>/in_flight_<n>/<p50|p99|cpu>/<impl>``,
so every number of a row comes from the same calls.

Each worker process starts its server and connects once, outside the timed region; the
connection then serves every value of that worker.  Before timing, the manager connects each pair
once and checks that ``echo`` returns its input, also under concurrent calls.

Event loop: every client runs on uvloop when it is installed (``--loop uvloop``, the default),
as mcpfast's own runners and servers do and as the floor is described (a bare client on uvloop
pipes); ``--loop asyncio`` runs them all on asyncio's own loop instead.  All pairs of a run use
the same loop; the loop is recorded in each benchmark's metadata (``loop``).
"""

from __future__ import annotations

import abc
import asyncio
import atexit
import contextlib
import functools
import math
import os
import socket
import subprocess
import sys
import time
from typing import AsyncIterator, Awaitable, Callable

if __package__ in (None, ""):
    # Run as a script (as pyperf runs its workers): make the repository importable.
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench import harness

TRANSPORTS = ("stdio", "tcp", "http", "http2026")
IN_FLIGHT = (1, 16, 256)
ECHO_TEXT = "The quick brown fox jumps over the lazy dog"
SERVERS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "servers")
STARTUP_TIMEOUT = 60.0   # seconds for a server to accept connections
CALLS_TIMEOUT = 600.0    # seconds for one timed batch of calls: a hung pair fails, not stalls

_METRIC_DISPLAY = {
    "rt": harness.DISPLAY_CALLS,
    "p50": harness.DISPLAY_LATENCY,
    "p99": harness.DISPLAY_LATENCY,
    "cpu": harness.DISPLAY_CPU,
}
_METRIC_TITLE = {
    "rt": "round trips",
    "p50": "p50 latency",
    "p99": "p99 latency",
    "cpu": "CPU per call",
}
LOOPS = ("uvloop", "asyncio")
_loop_name = "uvloop"  # set by main() from --loop, in the manager and in every worker


def loop_name() -> str:
    """The event loop the clients run on: uvloop when asked for and installed."""
    if _loop_name == "uvloop":
        try:
            import uvloop  # noqa: F401
        except ImportError:
            return "asyncio"
    return _loop_name


def new_event_loop() -> asyncio.AbstractEventLoop:
    """A new loop of the kind :func:`loop_name` names."""
    if loop_name() == "uvloop":
        import uvloop

        return uvloop.new_event_loop()
    return asyncio.new_event_loop()


_TRANSPORT_TITLE = {"stdio": "stdio", "tcp": "TCP", "http": "Streamable HTTP",
                    "http2026": "Streamable HTTP 2026-07-28"}


class Connection:
    """A connected client: ``call(text)`` makes one tools/call of ``echo`` and returns its text."""

    def __init__(self, call: Callable[[str], Awaitable[str]], server_pid: int) -> None:
        self.call = call
        self.server_pid = server_pid


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def _wait_for_port(port: int, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with status {process.returncode} before listening")
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"server did not listen on port {port} within {STARTUP_TIMEOUT} s") from None
            await asyncio.sleep(0.05)
            continue
        writer.close()
        await writer.wait_closed()
        return


@contextlib.contextmanager
def _server_process(script: str, *args: str):
    """A server subprocess (its output discarded), terminated on exit."""
    process = subprocess.Popen(
        [sys.executable, os.path.join(SERVERS_DIR, script), *args],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _child_running(script: str) -> int:
    """Pid of the child process running ``script`` (a stdio server the client library spawned)."""
    import psutil

    path = os.path.join(SERVERS_DIR, script)
    for child in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if path in child.cmdline():
                return child.pid
    raise RuntimeError(f"no child process runs {path}")


def _first_text(result: object) -> str:
    """The text of the first content block of a CallToolResult (model object or plain dict)."""
    content = result["content"] if isinstance(result, dict) else result.content
    block = content[0]
    return block["text"] if isinstance(block, dict) else block.text


class Pair(abc.ABC):
    """A client library and its server, over any of the transports it supports."""

    key = ""
    label = ""
    script = ""

    @abc.abstractmethod
    def unavailable_reason(self) -> str | None:
        """Why this pair cannot run at all (a missing package or API), or None."""

    def unsupported_reason(self, transport: str) -> str | None:
        """Why this pair has no such transport, or None."""
        return None

    def not_available_errors(self) -> tuple[type[BaseException], ...]:
        """Exceptions by which connect() says a transport is not available yet."""
        return ()

    @abc.abstractmethod
    def connect(self, transport: str) -> contextlib.AbstractAsyncContextManager[Connection]:
        """Start the server, connect and initialise; yields a Connection; stops both on exit."""


class OfficialPair(Pair):
    key = "official"
    label = "official mcp SDK"
    script = "official_echo.py"
    # The server's stdio mode (the telemetry pairs below start it with the SDK configured).
    stdio_mode = "stdio"

    def unavailable_reason(self):
        try:
            import mcp  # noqa: F401
            from mcp.server import MCPServer  # noqa: F401
        except ImportError as exc:
            return f"cannot import the official mcp SDK: {exc}"
        return None

    def unsupported_reason(self, transport):
        if transport == "tcp":
            return "the official SDK has no TCP transport"
        return None

    @contextlib.asynccontextmanager
    async def connect(self, transport: str) -> AsyncIterator[Connection]:
        from mcp import ClientSession

        if transport == "stdio":
            from mcp import StdioServerParameters, stdio_client

            params = StdioServerParameters(
                command=sys.executable, args=[os.path.join(SERVERS_DIR, self.script), self.stdio_mode])
            with open(os.devnull, "w") as errlog:
                async with stdio_client(params, errlog=errlog) as (read, write):
                    async with ClientSession(read, write) as session:
                        await session.initialize()
                        yield self._connection(session, _child_running(self.script))
        elif transport == "http":
            from mcp.client.streamable_http import streamable_http_client

            port = _free_port()
            with _server_process(self.script, "http", str(port)) as process:
                await _wait_for_port(port, process)
                async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write):
                    async with ClientSession(read, write) as session:
                        await session.initialize()
                        yield self._connection(session, process.pid)
        elif transport == "http2026":
            from mcp.client.client import Client

            port = _free_port()
            with _server_process(self.script, "http", str(port)) as process:
                await _wait_for_port(port, process)
                async with Client(f"http://127.0.0.1:{port}/mcp", mode="auto") as client:
                    yield self._connection(client, process.pid)
        else:
            raise ValueError(f"the official SDK has no {transport} transport")

    @staticmethod
    def _connection(session, server_pid: int) -> Connection:
        call_tool = session.call_tool

        async def call(text: str) -> str:
            return _first_text(await call_tool("echo", {"text": text}))

        return Connection(call, server_pid)


class McpfastPair(Pair):
    """mcpfast's own server and client; rows say "not available yet" until both exist."""

    key = "mcpfast"
    label = "mcpfast"
    script = "mcpfast_echo.py"
    stdio_mode = "stdio"

    def unavailable_reason(self):
        try:
            import mcpfast
        except ImportError as exc:
            return f"not available yet: cannot import mcpfast ({exc})"
        missing = [name for name in ("Server", "connect") if not hasattr(mcpfast, name)]
        if missing:
            return "not available yet: mcpfast has no " + " / ".join(f"mcpfast.{n}" for n in missing)
        return None

    def not_available_errors(self) -> tuple[type[BaseException], ...]:
        try:
            from mcpfast.client import TransportUnavailable
        except ImportError:
            return ()
        return (TransportUnavailable,)

    @contextlib.asynccontextmanager
    async def connect(self, transport: str) -> AsyncIterator[Connection]:
        import mcpfast

        script = os.path.join(SERVERS_DIR, self.script)
        if transport == "stdio":
            with open(os.devnull, "w") as errlog:
                async with mcpfast.connect([sys.executable, script, self.stdio_mode], stderr=errlog) as client:
                    yield self._connection(client, _child_running(self.script))
        elif transport in ("tcp", "http", "http2026"):
            port = _free_port()
            target = (f"tcp://127.0.0.1:{port}" if transport == "tcp"
                      else f"http://127.0.0.1:{port}/mcp")
            # connect() refuses a transport it does not have at once, before a server starts.
            connector = (mcpfast.connect(target, protocol_version="2026-07-28")
                         if transport == "http2026" else mcpfast.connect(target))
            with _server_process(self.script, "tcp" if transport == "tcp" else "http",
                                 str(port)) as process:
                await _wait_for_port(port, process)
                async with connector as client:
                    yield self._connection(client, process.pid)
        else:
            raise ValueError(f"unknown transport {transport!r}")

    @staticmethod
    def _connection(client, server_pid: int) -> Connection:
        call_tool = client.call_tool

        async def call(text: str) -> str:
            return _first_text(await call_tool("echo", {"text": text}))

        return Connection(call, server_pid)


class BareClientPair(Pair):
    """The floor of a client: a bare asyncio client -- subprocess pipes on the event loop
    every row here runs on, orjson, a dict of futures by request id, the initialize
    handshake written by hand -- against the same mcpfast server over stdio."""

    key = "bare-client"
    label = "bare asyncio client (mcpfast server)"
    script = "mcpfast_echo.py"

    def unavailable_reason(self):
        try:
            import orjson  # noqa: F401

            import mcpfast  # noqa: F401
        except ImportError as exc:
            return f"cannot import {exc.name}"
        return None

    def unsupported_reason(self, transport):
        if transport != "stdio":
            return "the bare client row is measured over stdio only"
        return None

    @contextlib.asynccontextmanager
    async def connect(self, transport: str) -> AsyncIterator[Connection]:
        import orjson

        process = await asyncio.create_subprocess_exec(
            sys.executable, os.path.join(SERVERS_DIR, self.script), "stdio",
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, limit=1 << 24)
        assert process.stdin is not None and process.stdout is not None
        stdin, stdout = process.stdin, process.stdout
        loop = asyncio.get_running_loop()
        waiting: dict[int, asyncio.Future] = {}
        next_id = iter(range(1, 1 << 62))

        async def read() -> None:
            while True:
                line = await stdout.readline()
                if not line:
                    return
                message = orjson.loads(line)
                future = waiting.pop(message.get("id"), None)
                if future is not None and not future.done():
                    future.set_result(message)

        reader = loop.create_task(read())

        async def request(method: str, params: dict) -> dict:
            request_id = next(next_id)
            future = waiting[request_id] = loop.create_future()
            stdin.write(orjson.dumps({"jsonrpc": "2.0", "id": request_id, "method": method,
                                      "params": params}) + b"\n")
            return await future

        try:
            await request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                         "clientInfo": {"name": "bare", "version": "1"}})
            stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

            async def call(text: str) -> str:
                answer = await request("tools/call", {"name": "echo", "arguments": {"text": text}})
                return answer["result"]["content"][0]["text"]

            yield Connection(call, process.pid)
        finally:
            reader.cancel()
            stdin.close()
            process.terminate()
            await process.wait()


class _TelemetryPair:
    """Mixed into a pair: its server over stdio with the OpenTelemetry SDK configured
    (bench/servers/otel_setup.py); stdio only (the HTTP rows are bench_http.py's)."""

    def unavailable_reason(self):
        try:
            import opentelemetry.sdk  # noqa: F401
        except ImportError as exc:
            return f"cannot import the OpenTelemetry SDK: {exc}"
        return super().unavailable_reason()  # type: ignore[misc]

    def unsupported_reason(self, transport):
        if transport != "stdio":
            return "the telemetry rows are timed over stdio here (HTTP: the http group)"
        return None


class McpfastTelemetryPair(_TelemetryPair, McpfastPair):
    key = "mcpfast-otel"
    label = "mcpfast, telemetry on (OTel SDK)"
    stdio_mode = "stdio-otel"


class OfficialTelemetryPair(_TelemetryPair, OfficialPair):
    key = "official-otel"
    label = "official mcp SDK, telemetry on (OTel SDK)"
    stdio_mode = "stdio-otel"


class OfficialTelemetryOffPair(_TelemetryPair, OfficialPair):
    key = "official-otel-off"
    label = "official mcp SDK, telemetry off (OTel SDK)"
    stdio_mode = "stdio-otel-off"


PAIRS: tuple[Pair, ...] = (McpfastPair(), OfficialPair(), BareClientPair(), McpfastTelemetryPair(),
                           OfficialTelemetryPair(), OfficialTelemetryOffPair())


class LiveConnection:
    """A pair connected over one transport for the life of this process, on its own event loop.

    The connection is opened by a task that then waits; between timed batches the loop is idle,
    and each batch runs with ``loop.run_until_complete``.  Closed at interpreter exit.
    """

    def __init__(self, pair: Pair, transport: str) -> None:
        self.loop = new_event_loop()
        self._stop = asyncio.Event()
        ready: asyncio.Future[Connection] = self.loop.create_future()

        async def hold() -> None:
            async with pair.connect(transport) as connection:
                ready.set_result(connection)
                await self._stop.wait()

        self._holder = self.loop.create_task(hold())
        self.loop.run_until_complete(asyncio.wait(
            [ready, self._holder], timeout=STARTUP_TIMEOUT, return_when=asyncio.FIRST_COMPLETED))
        if not ready.done():
            if self._holder.done():
                self._holder.result()  # raises the connection error
            raise RuntimeError(f"{pair.label} over {transport}: no connection in {STARTUP_TIMEOUT} s")
        self.connection = ready.result()
        atexit.register(self.close)

    def close(self) -> None:
        if self.loop.is_closed():
            return
        self._stop.set()
        try:
            self.loop.run_until_complete(asyncio.wait_for(self._holder, 30))
        except Exception as exc:  # at exit, after the measurements: report, do not fail them
            print(f"warning: closing the benchmark connection failed: {exc!r}", file=sys.stderr)
        self.loop.close()

    def run(self, coroutine):
        return self.loop.run_until_complete(asyncio.wait_for(coroutine, CALLS_TIMEOUT))


def _server_cpu_seconds(pid: int) -> float:
    import psutil

    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


async def _calls(call: Callable[[str], Awaitable[str]], per_task: int, in_flight: int,
                 latencies: list[float]) -> None:
    """``in_flight`` tasks, each making ``per_task`` sequential calls; every latency recorded."""
    clock = time.perf_counter
    record = latencies.append

    async def task() -> None:
        for _ in range(per_task):
            start = clock()
            await call(ECHO_TEXT)
            record(clock() - start)

    if in_flight == 1:
        await task()
    else:
        await asyncio.gather(*(task() for _ in range(in_flight)))


def _percentile(values: list[float], fraction: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


class DetailRecorder:
    """p50, p99 and CPU per call of every timed batch in this worker, written at exit."""

    METRICS = ("p50", "p99", "cpu")

    def __init__(self, case: harness.Case, path: str, keep_last: int) -> None:
        self.case = case
        self.path = path
        self.keep_last = keep_last
        self.samples: list[dict[str, float]] = []
        atexit.register(self.write)

    def add(self, latencies: list[float], cpu_seconds: float) -> None:
        self.samples.append({
            "p50": _percentile(latencies, 0.50),
            "p99": _percentile(latencies, 0.99),
            "cpu": cpu_seconds / len(latencies),
        })

    def write(self) -> None:
        import pyperf

        # pyperf runs the warmups first, then the values: keep the values.
        samples = self.samples[-self.keep_last:] if self.keep_last else []
        if not samples:
            return
        base, impl = self.case.name.rsplit("/", 2)[0], self.case.impl
        title = self.case.case_title.rsplit(":", 1)[0]
        for metric in self.METRICS:
            meta = dict(self.case.pyperf_metadata())
            meta.update({
                "name": f"{base}/{metric}/{impl}",
                "unit": "second",
                "metric": metric,
                "display": _METRIC_DISPLAY[metric],
                "case_title": f"{title}: {_METRIC_TITLE[metric]}",
            })
            run = pyperf.Run([sample[metric] for sample in samples], metadata=meta,
                             collect_metadata=False)
            pyperf.add_runs(self.path, pyperf.Benchmark([run]))


def time_round_trips(loops: int, live: LiveConnection, in_flight: int,
                     recorder: DetailRecorder | None) -> float:
    """pyperf time function: ``loops * in_flight`` calls; wall seconds (details to ``recorder``)."""
    pid = live.connection.server_pid
    latencies: list[float] = []
    cpu_before = time.process_time() + _server_cpu_seconds(pid)
    start = time.perf_counter()
    live.run(_calls(live.connection.call, loops, in_flight, latencies))
    elapsed = time.perf_counter() - start
    cpu = time.process_time() + _server_cpu_seconds(pid) - cpu_before
    if recorder is not None:
        recorder.add(latencies, cpu)
    return elapsed


_live: dict[tuple[str, str], LiveConnection] = {}
_checked: dict[tuple[str, str], tuple[str, str]] = {}


def _live_connection(pair: Pair, transport: str) -> LiveConnection:
    key = (pair.key, transport)
    if key not in _live:
        _live[key] = LiveConnection(pair, transport)
    return _live[key]


def check_pair(pair: Pair, transport: str) -> tuple[str, str]:
    """Connect once and check that echo answers with its input (cached per pair and transport)."""
    key = (pair.key, transport)
    if key in _checked:
        return _checked[key]
    reason = pair.unavailable_reason()
    if reason:
        result = (harness.UNAVAILABLE, reason)
    elif (reason := pair.unsupported_reason(transport)):
        result = (harness.UNSUPPORTED, reason)
    else:
        result = _smoke_test(pair, transport)
    _checked[key] = result
    return result


def _smoke_test(pair: Pair, transport: str) -> tuple[str, str]:
    async def exercise() -> str | None:
        async with pair.connect(transport) as connection:
            for text in (ECHO_TEXT, "naïve ☃ \"quoted\"\n"):
                got = await connection.call(text)
                if got != text:
                    return f"echo returned {got!r} for {text!r}"
            # Concurrent calls must each get their own answer back.
            texts = [f"call {n}" for n in range(32)]
            answers = await asyncio.gather(*(connection.call(t) for t in texts))
            if list(answers) != texts:
                return "concurrent calls got answers that do not match their requests"
        return None

    loop = new_event_loop()
    try:
        problem = loop.run_until_complete(asyncio.wait_for(exercise(), STARTUP_TIMEOUT + 60))
    except pair.not_available_errors() as exc:
        text = str(exc)
        return harness.UNAVAILABLE, text if "not available" in text else f"not available yet: {text}"
    except Exception as exc:  # any other failure means this pair cannot be measured
        return harness.WRONG, f"raised {type(exc).__name__}: {exc}"
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
    if problem:
        return harness.WRONG, problem
    return harness.OK, ""


def _case(pair: Pair, transport: str, in_flight: int, runner_args) -> harness.Case:
    load = "sequential" if in_flight == 1 else f"{in_flight} in flight"

    def prepare():
        recorder = None
        args = runner_args
        calibrating = args is not None and (args.calibrate_loops or args.recalibrate_loops
                                            or args.calibrate_warmups or args.recalibrate_warmups)
        if args is not None and args.detail_output and not calibrating:
            recorder = DetailRecorder(case, args.detail_output, keep_last=args.values)
        return time_round_trips, (_live_connection(pair, transport), in_flight, recorder)

    case = harness.Case(
        name=f"e2e/{transport}/in_flight_{in_flight}/rt/{pair.key}",
        impl_label=pair.label,
        case_title=f"{_TRANSPORT_TITLE[transport]}, {load}: {_METRIC_TITLE['rt']}",
        check=functools.partial(check_pair, pair, transport),
        prepare=prepare,
        display=harness.DISPLAY_CALLS,
        inner_loops=in_flight,
        metadata={"transport": transport, "in_flight": in_flight, "loop": loop_name()},
    )
    return case


def cases(runner_args=None) -> list[harness.Case]:
    """One round-trip case per transport, load and pair (``runner_args``: the parsed pyperf
    arguments, which say whether this worker records latency and CPU details)."""
    return [_case(pair, transport, in_flight, runner_args)
            for transport in TRANSPORTS for in_flight in IN_FLIGHT for pair in PAIRS]


def main() -> None:
    # Fewer, longer values than the per-op groups: each worker process starts a server.
    global _loop_name
    runner = harness.make_runner(
        {"--detail-output": {"metavar": "FILE", "help": "pyperf JSON file that workers append "
                             "the p50, p99 and CPU benchmarks to"},
         "--loop": {"choices": LOOPS, "help": "event loop of the clients: uvloop (default, "
                    "when installed) or asyncio"}},
        processes=2, values=3, min_time=0.25)
    args = runner.parse_args()
    _loop_name = args.loop or "uvloop"
    harness.run(runner, "e2e", cases(args))


if __name__ == "__main__":
    main()
