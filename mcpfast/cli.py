"""The ``mcpfast`` command (also ``python -m mcpfast``).

    mcpfast call SERVER TOOL [key=value ...] [--json '{...}']
        Call one tool and print its CallToolResult as JSON. Each key=value is one argument;
        the value is parsed as JSON when it parses (``n=3``, ``flag=true``,
        ``tags='["a","b"]'``) and taken as a string otherwise (``name=Ada``; ``id='"7"'``
        for the string "7"). ``--json`` gives a whole arguments object; key=value pairs
        override its keys. Exit status 1 when the result has ``isError: true``.

    mcpfast list SERVER [tools|resources|templates|prompts]
        Print every item of that list (all pages) as a JSON array (default: tools).

    mcpfast run path/to/server.py[:app] [--transport stdio|http|sse|websocket|tcp]
                                        [--host H] [--port P]
        Load the file as a module, find its Server (the object named after the colon, else
        one named app, server or mcp, else the only Server in it) and call its run().
        stdio/TCP limits: --max-frame-size BYTES, --idle-timeout SECONDS (0: never),
        --max-connections N and --max-buffered BYTES (TCP only).

SERVER is a command line starting a stdio server (split like a POSIX shell does; a first
word ending in .py that names a file is run with this Python), or a URL (``tcp://host:port``).
Options of call and list: ``--env KEY=VALUE`` (repeatable; added to the child's
environment), ``--cwd DIR``, ``--timeout SECONDS`` (per request; default 60).

Exit status: 0 success; 1 the server answered with an error (or a tool result with
isError), the connection failed, or the server misbehaved; 2 bad usage, or a transport that
is not available yet; 130 interrupted.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any, Optional, Sequence

from mcpfast import __version__
from mcpfast.cli_auth import add_auth_flags, auth_options
from mcpfast.scaleout.redis_publisher import RedisUnavailable
from mcpfast.workers import LISTEN_FD_VARIABLE, Supervisor, announce_ready, follow_supervisor

__all__ = ["main", "parse_arguments", "parse_value"]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

LIST_KINDS = ("tools", "resources", "templates", "prompts")
RUN_TRANSPORTS = ("stdio", "http", "sse", "websocket", "tcp")
# Names searched for the Server object in a file given to ``mcpfast run``, in order.
SERVER_NAMES = ("app", "server", "mcp")
DEFAULT_TIMEOUT = 60.0


class UsageError(Exception):
    """Bad command-line input: reported with exit status 2."""


# -- arguments -------------------------------------------------------------------------------


def parse_value(text: str) -> Any:
    """A key=value value: the JSON value it spells when it parses, else the string itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_arguments(pairs: Sequence[str], base: Optional[str] = None) -> dict:
    """The tool arguments from ``--json`` (base) and key=value pairs (which win)."""
    arguments: dict[str, Any] = {}
    if base is not None:
        try:
            value = json.loads(base)
        except ValueError as exc:
            raise UsageError(f"--json is not valid JSON: {exc}") from None
        if not isinstance(value, dict):
            raise UsageError(f"--json must be a JSON object, got {type(value).__name__}")
        arguments.update(value)
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"tool arguments are key=value, got {pair!r}")
        arguments[key] = parse_value(text)
    return arguments


def _environment(pairs: Sequence[str]) -> Optional[dict]:
    if not pairs:
        return None
    env = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--env takes KEY=VALUE, got {pair!r}")
        env[key] = value
    return env


def server_target(text: str) -> Any:
    """What ``connect`` gets for SERVER: a URL as is, else the command as a list."""
    if "://" in text and not any(c.isspace() for c in text):
        return text
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise UsageError(f"cannot split the server command {text!r}: {exc}") from None
    if not words:
        raise UsageError("the server command is empty")
    if words[0].endswith(".py") and os.path.isfile(words[0]):
        words.insert(0, sys.executable)
    return words


# -- output ----------------------------------------------------------------------------------


def _print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def _error(message: str) -> None:
    sys.stderr.write(f"mcpfast: {message}\n")
    sys.stderr.flush()


# -- call and list ---------------------------------------------------------------------------


def _connect_options(args: argparse.Namespace, target: Any) -> dict:
    options: dict[str, Any] = {"timeout": args.timeout, "name": "mcpfast-cli"}
    env = _environment(args.env)
    if isinstance(target, list):
        options["env"] = env
        options["cwd"] = args.cwd
    elif env is not None or args.cwd is not None:
        raise UsageError("--env and --cwd apply to a server command, not to a URL")
    return options


async def _call(args: argparse.Namespace) -> int:
    from mcpfast.client import connect

    arguments = parse_arguments(args.arguments, args.json)
    target = server_target(args.server)
    async with connect(target, **_connect_options(args, target)) as client:
        result = await client.call_tool(args.tool, arguments)
    _print_json(result)
    return EXIT_ERROR if isinstance(result, dict) and result.get("isError") is True else EXIT_OK


async def _list(args: argparse.Namespace) -> int:
    from mcpfast.client import connect

    target = server_target(args.server)
    async with connect(target, **_connect_options(args, target)) as client:
        if args.kind == "tools":
            items = await client.list_tools()
        elif args.kind == "resources":
            items = await client.list_resources()
        elif args.kind == "templates":
            items = await client.list_resource_templates()
        else:
            items = await client.list_prompts()
    _print_json(items)
    return EXIT_OK


def _run_client_command(coroutine_function: Any, args: argparse.Namespace) -> int:
    from mcpfast.client import ClientError, TransportUnavailable
    from mcpfast.jsonrpc import JSONRPCError
    from mcpfast.transports import run

    try:
        return run(coroutine_function(args))
    except UsageError as exc:
        _error(str(exc))
        return EXIT_USAGE
    except TransportUnavailable as exc:
        _error(str(exc))
        return EXIT_USAGE
    except JSONRPCError as exc:
        error: dict[str, Any] = {"code": exc.code, "message": exc.message}
        if exc.has_data:
            error["data"] = exc.data
        sys.stderr.write(json.dumps({"error": error}, ensure_ascii=False) + "\n")
        return EXIT_ERROR
    except OSError as exc:
        _error(f"cannot connect to {args.server!r}: {exc.strerror or exc}")
        return EXIT_ERROR
    except (ClientError, ValueError, TypeError) as exc:
        _error(str(exc) or type(exc).__name__)
        return EXIT_ERROR


# -- run -------------------------------------------------------------------------------------


def load_server(spec: str) -> Any:
    """The Server object of ``path/to/file.py[:name]`` (module docstring)."""
    path_text, _, name = spec.partition(":")
    # A Windows drive letter ("C:\\x.py") is not a name separator.
    if len(path_text) == 1 and name[:1] in ("\\", "/"):
        path_text, _, name = spec[2:].partition(":")
        path_text = spec[:2] + path_text
    path = Path(path_text)
    if not path.is_file():
        raise UsageError(f"no such file: {path_text}")
    module_name = f"_mcpfast_app_{path.stem}"
    module_spec = importlib.util.spec_from_file_location(module_name, path)
    if module_spec is None or module_spec.loader is None:
        raise UsageError(f"cannot load {path_text} as a Python module")
    module = importlib.util.module_from_spec(module_spec)
    # Imports next to the file work as they would when it is run as a script.
    sys.path.insert(0, str(path.resolve().parent))
    sys.modules[module_name] = module
    module_spec.loader.exec_module(module)
    if name:
        if not hasattr(module, name):
            raise UsageError(f"{path_text} has no object named {name!r}")
        found = getattr(module, name)
    else:
        found = None
        for candidate in SERVER_NAMES:
            if _is_server(getattr(module, candidate, None)):
                found = getattr(module, candidate)
                break
        if found is None:
            servers = [value for value in vars(module).values() if _is_server(value)]
            if len(servers) != 1:
                raise UsageError(
                    f"{path_text}: found {len(servers) or 'no'} Server objects; name one: "
                    f"{path_text}:NAME"
                )
            found = servers[0]
    if not _is_server(found):
        raise UsageError(f"{spec} is not an mcpfast Server (it has no run method)")
    return found


def _is_server(value: Any) -> bool:
    from mcpfast.server import Server

    return isinstance(value, Server)


def transport_available(name: str) -> bool:
    """True when mcpfast.transports can serve ``name`` (it has ``serve_<name>``)."""
    import mcpfast.transports as transports

    return callable(getattr(transports, f"serve_{name}", None))


def _run(args: argparse.Namespace) -> int:
    if not transport_available(args.transport):
        _error(f"the {args.transport} transport is not available yet")
        return EXIT_USAGE
    try:
        server = load_server(args.target)
    except UsageError as exc:
        _error(str(exc))
        return EXIT_USAGE
    if args.rate_limit is not None:
        from mcpfast.server.middleware import RateLimit

        try:
            store = None
            if args.redis is not None:
                # One bucket per caller and tool for every process on this Redis.
                from mcpfast.scaleout.redis_rate_limit import RedisBuckets

                store = RedisBuckets(args.redis)
            server.add_middleware(RateLimit.from_flag(args.rate_limit, store))
        except (ImportError, ValueError, RuntimeError) as exc:
            _error(str(exc))
            return EXIT_USAGE
    options: dict[str, Any] = {}
    if args.host is not None:
        options["host"] = args.host
    if args.port is not None:
        if not 0 <= args.port <= 65535:
            _error(f"--port must be in 0..65535, got {args.port}")
            return EXIT_USAGE
        options["port"] = args.port
    if args.transport == "stdio" and options:
        _error("--host and --port apply to network transports, not to stdio")
        return EXIT_USAGE
    try:
        options.update(stream_limit_options(args))
        options.update(http_options(args))
        options.update(auth_options(args))
    except (UsageError, ValueError, OSError) as exc:
        _error(str(exc))
        return EXIT_USAGE
    if args.redis is not None:
        try:
            from mcpfast.scaleout.redis_publisher import RedisPublisher
            from mcpfast.scaleout.redis_task_store import RedisTaskStore

            server.publisher = RedisPublisher(args.redis)
            server.tasks.store = RedisTaskStore(args.redis)
            if args.transport == "http" and not options.get("stateless"):
                from mcpfast.scaleout.redis_event_store import RedisEventStore
                from mcpfast.scaleout.redis_session_directory import RedisSessionDirectory

                # 2025-era sessions served by any process, their streams resumed on any.
                options["session_directory"] = RedisSessionDirectory(args.redis)
                options["event_store"] = RedisEventStore(args.redis)
        except (ImportError, ValueError) as exc:
            _error(str(exc))
            return EXIT_USAGE
    workers = args.workers
    if workers < 1:
        _error(f"--workers must be >= 1, got {workers}")
        return EXIT_USAGE
    if workers > 1:
        if args.transport != "http":
            _error("--workers applies to --transport http")
            return EXIT_USAGE
        if args.redis is None and not options.get("stateless"):
            # A 2025-era session lives in the worker that made it, and the kernel spreads a
            # client's connections over all of them: its next request would get 404.
            _error(f"--workers {workers} needs --redis URL (sessions shared by every worker) "
                   f"or --stateless (no sessions)")
            return EXIT_USAGE
        return _supervise(args, workers, options)
    listen_fd = os.environ.get(LISTEN_FD_VARIABLE)
    if listen_fd and args.transport == "http":
        # One of several workers: serve the listening socket the supervisor made.
        import socket

        options["sock"] = socket.socket(fileno=int(listen_fd))
        follow_supervisor()
    if args.transport != "stdio":
        # Said once listening, with the port the system gave (--port 0 picks a free one).
        def announce(host: str, port: int) -> None:
            if announce_ready(host, port, server.name):
                return  # a worker: the supervisor says where the workers listen
            where = f"{host}:{port}" if ":" not in host else f"[{host}]:{port}"
            if args.transport == "http":
                where = f"http://{where}{options.get('path', '/mcp')}"
            elif args.transport == "websocket":
                where = f"ws://{where}/mcp"
            print(f"mcpfast: serving {server.name!r} over {args.transport} on {where}",
                  file=sys.stderr, flush=True)

        options["ready"] = announce
    try:
        server.run(args.transport, **options)
    except RedisUnavailable as exc:
        _error(str(exc))
        return EXIT_ERROR
    except OSError as exc:
        _error(f"cannot serve on {options.get('host', '127.0.0.1')}:{options.get('port', 8000)}: "
               f"{exc.strerror or exc}")
        return EXIT_ERROR
    return EXIT_OK


def _supervise(args: argparse.Namespace, workers: int, options: dict) -> int:
    """``--workers N``: this process supervises N workers running the same command."""
    command = [sys.executable, "-m", "mcpfast", *_worker_argv(args.raw_argv)]
    supervisor = Supervisor(command, workers, options.get("host", "127.0.0.1"), options.get("port", 8000))
    try:
        supervisor.listen()
    except OSError as exc:
        _error(f"cannot serve on {options.get('host', '127.0.0.1')}:{options.get('port', 8000)}: "
               f"{exc.strerror or exc}")
        return EXIT_ERROR
    return supervisor.run()


def _worker_argv(argv: Sequence[str]) -> list[str]:
    """The command line of a worker: this one without --workers (its port: the bound one)."""
    out: list[str] = []
    skip = False
    for part in argv:
        if skip:
            skip = False
            continue
        if part in ("--workers", "--port"):
            skip = True
            continue
        if part.startswith(("--workers=", "--port=")):
            continue
        out.append(part)
    return [*out, "--port", "{port}"]


# -- run: Streamable HTTP options ------------------------------------------------------------


def add_http_flags(run: argparse.ArgumentParser) -> None:
    """The ``mcpfast run`` flags of the Streamable HTTP transport."""
    group = run.add_argument_group("Streamable HTTP (--transport http)")
    group.add_argument("--path", default=None, help="the MCP endpoint's path (default /mcp)")
    group.add_argument("--stateless", action="store_true", default=None,
                       help="no sessions: every POST stands alone (any load balancer)")
    group.add_argument("--json-response", action="store_true", default=None,
                       help="answer every request with application/json, never SSE")
    group.add_argument("--allow-host", action="append", default=None, metavar="HOST[:PORT|:*]",
                       help="Host header accepted besides the loopback names (repeatable; "
                            "DNS-rebinding protection is on for loopback binds)")
    group.add_argument("--allow-origin", action="append", default=None, metavar="URL",
                       help="Origin header accepted (repeatable), e.g. https://app.example")
    group.add_argument("--max-body-size", type=int, default=None, metavar="BYTES",
                       help="largest POST body; larger ones get 413 (default 4 MiB)")
    group.add_argument("--legacy-sse", action="store_true", default=None,
                       help="also serve 2024-11-05 HTTP+SSE clients on /sse and /messages "
                            "(default: off)")
    group.add_argument("--max-sessions", type=int, default=None, metavar="N",
                       help="sessions open at once; a new initialize then gets 503 (default 10000)")
    group.add_argument("--session-idle-timeout", type=float, default=None, metavar="SECONDS",
                       help="end a session unused this long (default 1800)")
    group.add_argument("--keepalive-timeout", type=float, default=None, metavar="SECONDS",
                       help="close a connection idle, or whose request has not arrived whole, "
                            "or whose client reads nothing, this long after its last answer "
                            "(default 75)")
    group.add_argument("--max-stream-buffer", type=int, default=None, metavar="BYTES",
                       help="bytes of events an SSE stream holds for a client that does not "
                            "read; past it the stream ends (default 8 MiB)")
    group.add_argument("--metrics", nargs="?", const="/metrics", default=None, metavar="PATH",
                       help="serve the telemetry's metrics as Prometheus text on this path of "
                            "the same port (default /metrics)")


def http_options(args: argparse.Namespace) -> dict:
    """The serve_http keywords the HTTP flags given on the command line ask for."""
    given = {
        "path": args.path, "stateless": args.stateless, "json_response": args.json_response,
        "allowed_hosts": args.allow_host, "allowed_origins": args.allow_origin,
        "max_body_size": args.max_body_size, "legacy_sse": args.legacy_sse,
        "max_sessions": args.max_sessions, "session_idle_timeout": args.session_idle_timeout,
        "keepalive_timeout": args.keepalive_timeout, "max_stream_buffer": args.max_stream_buffer,
        "metrics_path": args.metrics,
    }
    options = {key: value for key, value in given.items() if value is not None}
    if options and args.transport != "http":
        flag = "--" + next(iter(options)).replace("_", "-")
        raise UsageError(f"{flag} applies to the http transport")
    for key in ("max_body_size", "max_sessions", "session_idle_timeout", "keepalive_timeout",
                "max_stream_buffer"):
        if options.get(key, 1) <= 0:
            raise UsageError(f"--{key.replace('_', '-')} must be positive, got {options[key]}")
    for key, flag in (("path", "--path"), ("metrics_path", "--metrics")):
        if key in options and not options[key].startswith("/"):
            raise UsageError(f"{flag} must start with '/', got {options[key]!r}")
    if "metrics_path" in options and options["metrics_path"] == options.get("path", "/mcp"):
        raise UsageError("--metrics must differ from the MCP endpoint's path")
    return options


# -- run: stdio/TCP limits (README, "Limits") ------------------------------------------------

# Flag -> (serve_* keyword, transports it applies to).
STREAM_LIMIT_FLAGS = {
    "max_frame_size": ("max_frame_size", ("stdio", "tcp")),
    "max_connections": ("max_connections", ("tcp", "http")),
    "idle_timeout": ("idle_timeout", ("stdio", "tcp")),
    "max_buffered": ("max_buffered", ("tcp",)),
    "write_timeout": ("write_timeout", ("stdio", "tcp")),
}


def add_stream_limit_flags(run: argparse.ArgumentParser) -> None:
    """The ``mcpfast run`` flags for the stdio and TCP limits."""
    group = run.add_argument_group("stdio/TCP limits (defaults: README, Limits)")
    group.add_argument("--max-frame-size", type=int, default=None, metavar="BYTES",
                       help="longest message line accepted (default 16 MiB)")
    group.add_argument("--max-connections", type=int, default=None, metavar="N",
                       help="tcp, http: connections open at once; more are closed (http: "
                            "with 503) (default 1024)")
    group.add_argument("--idle-timeout", type=float, default=None, metavar="SECONDS",
                       help="close a connection idle (or stuck on an incomplete line) this "
                            "long; 0: never (default: tcp 300, stdio never)")
    group.add_argument("--max-buffered", type=int, default=None, metavar="BYTES",
                       help="tcp: incomplete-line bytes of all connections together "
                            "(default 4 x max frame size)")
    group.add_argument("--write-timeout", type=float, default=None, metavar="SECONDS",
                       help="drop a peer that leaves more than 32 MiB of answers unread and "
                            "reads nothing this long; 0: never (default 60)")


def stream_limit_options(args: argparse.Namespace) -> dict:
    """The serve_* keywords the limit flags given on the command line ask for."""
    options: dict[str, Any] = {}
    for attribute, (keyword, transports) in STREAM_LIMIT_FLAGS.items():
        value = getattr(args, attribute, None)
        if value is None:
            continue
        flag = "--" + attribute.replace("_", "-")
        if args.transport not in transports:
            raise UsageError(f"{flag} applies to the {' and '.join(transports)} transport(s)")
        if attribute in ("idle_timeout", "write_timeout") and value == 0:
            value = None  # 0: never
        elif value <= 0:
            raise UsageError(f"{flag} must be positive, got {value}")
        options[keyword] = value
    return options


# -- entry point -----------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcpfast", description="Call, list and run Model Context Protocol servers."
    )
    parser.add_argument("--version", action="version", version=f"mcpfast {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def client_options(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                         help="environment variable for the server process (repeatable)")
        sub.add_argument("--cwd", default=None, help="working directory of the server process")
        sub.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                         help="seconds to wait for each answer (default %(default)s)")

    call = commands.add_parser("call", help="call a tool and print the result as JSON")
    call.add_argument("server", help="server command line or URL (tcp://host:port)")
    call.add_argument("tool", help="tool name")
    call.add_argument("arguments", nargs="*", metavar="key=value",
                      help="tool arguments (values parsed as JSON when they parse)")
    call.add_argument("--json", default=None, metavar="OBJECT",
                      help="the tool arguments as one JSON object")
    client_options(call)

    listing = commands.add_parser("list", help="list tools, resources, templates or prompts")
    listing.add_argument("server", help="server command line or URL (tcp://host:port)")
    listing.add_argument("kind", nargs="?", default="tools", choices=LIST_KINDS)
    client_options(listing)

    run = commands.add_parser("run", help="run a server defined in a Python file")
    run.add_argument("target", metavar="path/to/server.py[:name]")
    run.add_argument("--transport", default="stdio", choices=RUN_TRANSPORTS)
    run.add_argument("--host", default=None, help="address to bind (default 127.0.0.1)")
    run.add_argument("--port", type=int, default=None, help="port to bind (default 8000; 0: any free one)")
    run.add_argument("--workers", type=int, default=1, metavar="N",
                     help="HTTP: N server processes on one port (SO_REUSEPORT; default 1): "
                          "SIGHUP restarts them one at a time, SIGTERM stops them gracefully")
    run.add_argument("--redis", default=None, metavar="URL",
                     help="redis://host:port: list changes, resource updates and log broadcasts "
                          "reach the clients of every process on this Redis, tasks are "
                          "answered by any of them, and (http) any of them serves a session "
                          "and resumes its streams (default: this process only)")
    run.add_argument("--rate-limit", default=None, metavar="RATE[:BURST]",
                     help="tools/call per second per caller and tool, a token bucket of BURST "
                          "(default: RATE) in each process (with --redis: shared by all of them); "
                          "beyond it -32010 with retryAfter")
    add_stream_limit_flags(run)
    add_http_flags(run)
    add_auth_flags(run)

    gateway = commands.add_parser("gateway", help="serve the MCP servers of a config file (mcpServers) "
                                                  "behind one endpoint (mcpfast.gateway)")
    gateway.add_argument("config", metavar="config.json")
    gateway.add_argument("--transport", default="stdio", choices=("stdio", "http"))
    gateway.add_argument("--host", default=None, help="address to bind (default 127.0.0.1)")
    gateway.add_argument("--port", type=int, default=None, help="port to bind (default 8000; 0: any free one)")
    add_http_flags(gateway)
    add_auth_flags(gateway)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line; returns the exit status (the console script exits with it)."""
    if argv is None:
        argv = sys.argv[1:]
    args = _parser().parse_args(argv)
    args.raw_argv = list(argv)
    try:
        if args.command == "call":
            return _run_client_command(_call, args)
        if args.command == "list":
            return _run_client_command(_list, args)
        if args.command == "gateway":
            from mcpfast.gateway.command import run_gateway

            return run_gateway(args)
        return _run(args)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
