"""Smoke check of an installed mcpfast (scripts/wheels runs it in a clean venv per artifact).

    venv/bin/python scripts/wheel_smoke.py MODULE [MODULE ...]

The MODULEs are the compiled modules the package must carry (scripts/wheels names one per
.pyx). Checked, in order: mcpfast and each compiled module come from this environment's
site-packages as extension modules, not from a source tree; no build tool (setuptools,
Cython, pysimdjson) is importable, so nothing was built or found at run time; a tiny server
answers one tools/call from mcpfast's client over stdio (a subprocess) and one over
Streamable HTTP (``mcpfast run ... --transport http`` on a free loopback port, stopped with
SIGTERM, exit status 0). Prints one line per check; exits non-zero at the first failure.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.machinery
import importlib.util
import os
import signal
import sys
import sysconfig
import tempfile
from pathlib import Path

SERVER = '''\
from mcpfast.server import Server

app = Server("smoke", version="1.0.0")


@app.tool()
def greet(name: str) -> str:
    """Greet someone."""
    return "hello " + name


if __name__ == "__main__":
    app.run("stdio")
'''

BUILD_TOOLS = ("setuptools", "Cython", "simdjson")
# A server that never says where it listens, or a call that never returns, fails the check.
DEADLINE = 60.0


def fail(message: str) -> None:
    sys.exit(f"wheel_smoke: FAILED: {message}")


def check_installed(modules: list[str]) -> str:
    """mcpfast and every compiled module from site-packages; no build tool importable."""
    site = Path(sysconfig.get_paths()["purelib"]).resolve()
    platsite = Path(sysconfig.get_paths()["platlib"]).resolve()
    import mcpfast

    where = Path(mcpfast.__file__).resolve()
    if site not in where.parents and platsite not in where.parents:
        fail(f"mcpfast imported from {where}, not from this environment's site-packages {site}")
    for name in modules:
        module = importlib.import_module(name)
        path = str(getattr(module, "__file__", ""))
        if not path.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
            fail(f"{name} is not a compiled extension module: {path or 'no __file__'}")
    present = [tool for tool in BUILD_TOOLS if importlib.util.find_spec(tool) is not None]
    if present:
        fail(f"build tools importable in the clean environment: {', '.join(present)}")
    return f"mcpfast {mcpfast.__version__} from {where.parent}, {len(modules)} compiled modules"


def check_answer(result: dict, name: str, transport: str) -> None:
    text = result.get("content", [{}])[0].get("text")
    if result.get("isError") or text != "hello " + name:
        fail(f"tools/call over {transport} answered {result!r}")


async def check_stdio(server: Path) -> str:
    from mcpfast import connect

    async with connect([sys.executable, str(server)]) as client:
        result = await asyncio.wait_for(client.call_tool("greet", {"name": "stdio"}), DEADLINE)
    check_answer(result, "stdio", "stdio")
    return "stdio: one tools/call answered"


async def check_http(server: Path) -> str:
    from mcpfast import connect

    # The console script of this environment: the entry point is part of what is checked.
    command = Path(sys.executable).parent / "mcpfast"
    process = await asyncio.create_subprocess_exec(
        str(command),
        "run",
        str(server),
        "--transport",
        "http",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert process.stderr is not None
    try:
        line = (await asyncio.wait_for(process.stderr.readline(), DEADLINE)).decode()
        if "serving" not in line:
            fail(f"mcpfast run did not say where it serves: {line!r}")
        url = line.strip().rsplit(" ", 1)[1]
        if not url.startswith("http://127.0.0.1:"):
            fail(f"mcpfast run serves on {url}, not on loopback")
        async with connect(url) as client:
            result = await asyncio.wait_for(client.call_tool("greet", {"name": "http"}), DEADLINE)
        check_answer(result, "http", "Streamable HTTP")
        process.send_signal(signal.SIGTERM)
        status = await asyncio.wait_for(process.wait(), DEADLINE)
        if status != 0:
            fail(f"mcpfast run exited with status {status} after SIGTERM")
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    return f"Streamable HTTP: one tools/call answered at {url}, server stopped cleanly"


def main(argv: list[str]) -> None:
    if not argv:
        sys.exit("usage: wheel_smoke.py MODULE [MODULE ...]  (the compiled modules to import)")
    print("wheel_smoke:", check_installed(argv), flush=True)
    with tempfile.TemporaryDirectory(prefix="mcpfast-smoke-") as folder:
        server = Path(folder) / "smoke_server.py"
        server.write_text(SERVER, encoding="utf-8")
        print("wheel_smoke:", asyncio.run(check_stdio(server)), flush=True)
        print("wheel_smoke:", asyncio.run(check_http(server)), flush=True)
    print(f"wheel_smoke: ok on Python {sys.version.split()[0]}")


if __name__ == "__main__":
    main(sys.argv[1:])
