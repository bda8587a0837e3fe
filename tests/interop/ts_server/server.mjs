// An MCP server written with the official TypeScript SDK (McpServer over stdio), driven by
// the mcpfast client in tests/interop/test_client_official_ts_server.py.
//
//   node server.mjs
//
// Tools: add (numbers), greet (structured output), fail (isError).
// Resources: memo://readme (text), memo://logo (blob) and the template memo://notes/{id}.
// Plain JavaScript (ESM): no TypeScript compile step.
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer(
  { name: "official-typescript", version: "1.32.2-test" },
  { instructions: "A TypeScript SDK server for mcpfast's interop tests." },
);

server.registerTool(
  "add",
  {
    description: "Add two numbers.",
    inputSchema: { a: z.number(), b: z.number() },
  },
  async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
);

server.registerTool(
  "greet",
  {
    title: "Greeter",
    description: "Greets someone, with structured output.",
    inputSchema: { name: z.string() },
    outputSchema: { greeting: z.string(), length: z.number() },
  },
  async ({ name }) => {
    const structured = { greeting: `Hello, ${name}!`, length: name.length };
    return {
      content: [{ type: "text", text: JSON.stringify(structured) }],
      structuredContent: structured,
    };
  },
);

server.registerTool(
  "fail",
  { description: "Always fails while running." },
  async () => {
    throw new Error("the TypeScript tool failed on purpose");
  },
);

server.registerResource(
  "readme",
  "memo://readme",
  { description: "A text resource", mimeType: "text/markdown" },
  async (uri) => ({
    contents: [{ uri: uri.href, mimeType: "text/markdown", text: "# Hello from TypeScript" }],
  }),
);

server.registerResource(
  "logo",
  "memo://logo",
  { description: "A binary resource", mimeType: "application/octet-stream" },
  async (uri) => ({
    contents: [{ uri: uri.href, mimeType: "application/octet-stream", blob: Buffer.from([0, 1, 2, 255]).toString("base64") }],
  }),
);

server.registerResource(
  "note",
  new ResourceTemplate("memo://notes/{id}", { list: undefined }),
  { description: "One note by id", mimeType: "text/plain" },
  async (uri, { id }) => ({
    contents: [{ uri: uri.href, mimeType: "text/plain", text: `note ${id}` }],
  }),
);

await server.connect(new StdioServerTransport());
