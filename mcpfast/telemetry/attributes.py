"""The attribute, span and metric names of OpenTelemetry's semantic conventions for MCP
(``docs/gen-ai/mcp.md`` of open-telemetry/semantic-conventions-genai), one copy of each."""

from __future__ import annotations

__all__ = [
    "CLIENT_ADDRESS", "CLIENT_PORT", "ERROR_TYPE", "GEN_AI_OPERATION_NAME", "GEN_AI_PROMPT_NAME",
    "GEN_AI_TOOL_CALL_ARGUMENTS", "GEN_AI_TOOL_CALL_RESULT", "GEN_AI_TOOL_NAME", "DURATION_BUCKETS",
    "EXECUTE_TOOL", "JSONRPC_PROTOCOL_VERSION", "JSONRPC_REQUEST_ID", "MCP_METHOD_NAME",
    "MCP_PROTOCOL_VERSION", "MCP_RESOURCE_URI", "MCP_SESSION_ID", "NETWORK_PROTOCOL_NAME",
    "NETWORK_PROTOCOL_VERSION", "NETWORK_TRANSPORT", "RPC_RESPONSE_STATUS_CODE", "SERVER_ADDRESS",
    "SERVER_PORT", "TOOL_ERROR", "CLIENT_OPERATION_DURATION", "CLIENT_SESSION_DURATION",
    "SERVER_OPERATION_DURATION", "SERVER_SESSION_DURATION", "SERVER_ACTIVE_REQUESTS",
    "SERVER_ACTIVE_SESSIONS", "SERVER_ACTIVE_CONNECTIONS", "CLIENT_ACTIVE_REQUESTS",
]

MCP_METHOD_NAME = "mcp.method.name"
MCP_SESSION_ID = "mcp.session.id"
MCP_PROTOCOL_VERSION = "mcp.protocol.version"
MCP_RESOURCE_URI = "mcp.resource.uri"
JSONRPC_REQUEST_ID = "jsonrpc.request.id"
JSONRPC_PROTOCOL_VERSION = "jsonrpc.protocol.version"
GEN_AI_OPERATION_NAME = "gen_ai.operation.name"
GEN_AI_TOOL_NAME = "gen_ai.tool.name"
GEN_AI_PROMPT_NAME = "gen_ai.prompt.name"
GEN_AI_TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
GEN_AI_TOOL_CALL_RESULT = "gen_ai.tool.call.result"
NETWORK_TRANSPORT = "network.transport"
NETWORK_PROTOCOL_NAME = "network.protocol.name"
NETWORK_PROTOCOL_VERSION = "network.protocol.version"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
CLIENT_ADDRESS = "client.address"
CLIENT_PORT = "client.port"
ERROR_TYPE = "error.type"
RPC_RESPONSE_STATUS_CODE = "rpc.response.status_code"

#: gen_ai.operation.name of a tools/call; error.type of a CallToolResult with isError.
EXECUTE_TOOL = "execute_tool"
TOOL_ERROR = "tool_error"

# The convention's histograms (seconds).
SERVER_OPERATION_DURATION = "mcp.server.operation.duration"
CLIENT_OPERATION_DURATION = "mcp.client.operation.duration"
SERVER_SESSION_DURATION = "mcp.server.session.duration"
CLIENT_SESSION_DURATION = "mcp.client.session.duration"
# mcpfast's own up-down counters (the convention names none).
SERVER_ACTIVE_REQUESTS = "mcpfast.server.active_requests"
SERVER_ACTIVE_SESSIONS = "mcpfast.server.active_sessions"
SERVER_ACTIVE_CONNECTIONS = "mcpfast.server.active_connections"
CLIENT_ACTIVE_REQUESTS = "mcpfast.client.active_requests"

#: The bucket boundaries the convention advises for its duration histograms (seconds).
DURATION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
