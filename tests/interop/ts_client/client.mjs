// Drives an MCP server with the official TypeScript SDK client and prints a JSON report of
// what it saw, for tests/interop/test_server_official_ts_client.py.
//
//   node client.mjs <command> [args...]     (stdio: the server is started as a child)
//   node client.mjs --url http://host:port/mcp   (Streamable HTTP)
//   node client.mjs --ws ws://host:port/mcp      (WebSocket, subprotocol "mcp"; needs a
//                                                 global WebSocket: Node 22, or Node 20
//                                                 with --experimental-websocket)
//
// The report: {serverInfo, protocolVersion, capabilities, tools, calls, resources,
// templates, reads, errors}. Every result was validated by the SDK's own schemas on the way
// in (it throws on a malformed result).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { WebSocketClientTransport } from "@modelcontextprotocol/sdk/client/websocket.js";

const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error("usage: node client.mjs <command> [args...]");
  process.exit(2);
}

const transport = command === "--url"
  ? new StreamableHTTPClientTransport(new URL(args[0]))
  : command === "--ws"
  ? new WebSocketClientTransport(new URL(args[0]))
  : new StdioClientTransport({
    command,
    args,
    env: { ...process.env },
    stderr: "inherit",
  });
const client = new Client({ name: "mcpfast-ts-interop", version: "1.0.0" });

const report = { calls: {}, reads: {}, errors: {}, protocolVersion: null };
// The client tells its transport the negotiated version (HTTP sends it as a header); the
// stdio transport has no use for it, so record it here.
const setProtocolVersion = transport.setProtocolVersion?.bind(transport);
transport.setProtocolVersion = (version) => {
  report.protocolVersion = version;
  setProtocolVersion?.(version);  // HTTP: the MCP-Protocol-Version header of later requests
};
try {
  await client.connect(transport);
  report.serverInfo = client.getServerVersion();
  report.capabilities = client.getServerCapabilities();

  const tools = await client.listTools();
  report.tools = tools.tools.map((t) => ({
    name: t.name,
    description: t.description ?? null,
    inputSchema: t.inputSchema,
    hasOutputSchema: t.outputSchema !== undefined,
  }));

  for (const [name, toolArgs] of [
    ["test_simple_text", {}],
    ["test_image_content", {}],
    ["test_multiple_content_types", {}],
    ["test_structured_output", { city: "Lima" }],
    ["test_error_handling", {}],
  ]) {
    const result = await client.callTool({ name, arguments: toolArgs });
    report.calls[name] = result;
  }
  try {
    await client.callTool({ name: "no_such_tool", arguments: {} });
    report.errors.unknownTool = null;
  } catch (error) {
    report.errors.unknownTool = { code: error.code, message: error.message };
  }

  const resources = await client.listResources();
  report.resources = resources.resources.map((r) => ({ uri: r.uri, name: r.name, mimeType: r.mimeType ?? null }));
  const templates = await client.listResourceTemplates();
  report.templates = templates.resourceTemplates.map((t) => t.uriTemplate);
  for (const uri of ["test://static-text", "test://static-binary", "test://template/7/data"]) {
    report.reads[uri] = await client.readResource({ uri });
  }
  try {
    await client.readResource({ uri: "test://missing" });
    report.errors.missingResource = null;
  } catch (error) {
    report.errors.missingResource = { code: error.code, message: error.message };
  }
  await client.ping();
  report.pinged = true;
} finally {
  await client.close();
}
process.stdout.write(JSON.stringify(report) + "\n");
