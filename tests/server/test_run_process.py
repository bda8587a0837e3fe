"""``Server.run`` owns its process: it freezes what exists before serving."""

from __future__ import annotations

import asyncio
import sys
import textwrap
from pathlib import Path

from mcpfast import connect

SERVER = textwrap.dedent('''
    import gc
    from mcpfast import Server

    app = Server("frozen")

    @app.tool()
    def frozen() -> int:
        return gc.get_freeze_count()

    app.run("stdio")
''')


def test_run_freezes_the_objects_made_before_serving(tmp_path: Path):
    script = tmp_path / "server.py"
    script.write_text(SERVER)

    async def main() -> int:
        async with connect([sys.executable, str(script)]) as client:
            result = await client.call_tool("frozen", {})
            return int(result["content"][0]["text"])

    assert asyncio.run(main()) > 1000  # modules, functions, the server's catalogs
