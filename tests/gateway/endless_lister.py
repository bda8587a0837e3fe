"""A hostile MCP server over stdio (plain JSON lines, no MCP library): it lists tools
without end, one tool and a new cursor per page, and answers tools/call of any of them."""

import json
import sys

for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method, params = message["method"], message.get("params") or {}
    if method == "initialize":
        result = {"protocolVersion": params["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "endless", "version": "1"}}
    elif method == "tools/list":
        page = int(params.get("cursor") or 0)
        result = {"tools": [{"name": f"t{page}", "inputSchema": {"type": "object"}}],
                  "nextCursor": str(page + 1)}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": params["name"]}]}
    else:
        result = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
    sys.stdout.flush()
