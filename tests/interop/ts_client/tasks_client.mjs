// Drives mcpfast's experimental tasks (MCP 2025-11-25) with the official TypeScript SDK
// client's task API and prints a JSON report, for tests/interop/test_server_official_ts_client.py.
//
//   node tasks_client.mjs <command> [args...]     (stdio: the server is started as a child)
//
// Every result was validated by the SDK's own schemas on the way in.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema, CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";

const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: { ...process.env }, stderr: "inherit" });
const client = new Client({ name: "mcpfast-ts-tasks", version: "1.0.0" });
const report = { errors: {} };

async function stream(params, options) {
  const seen = { kinds: [], taskId: null, text: null, isError: null, error: null };
  for await (const message of client.experimental.tasks.callToolStream(params, CallToolResultSchema, options)) {
    seen.kinds.push(message.type);
    if (message.type === "taskCreated") seen.taskId = message.task.taskId;
    if (message.type === "result") {
      seen.text = message.result.content?.[0]?.text ?? null;
      seen.isError = message.result.isError ?? false;
    }
    if (message.type === "error") seen.error = { code: message.error.code, message: String(message.error.message) };
  }
  return seen;
}

try {
  await client.connect(transport);
  report.tasksCapability = client.getServerCapabilities().tasks ?? null;
  const tools = await client.listTools();
  report.execution = Object.fromEntries(
    tools.tools.filter((tool) => tool.execution?.taskSupport).map((tool) => [tool.name, tool.execution.taskSupport]));
  report.completed = await stream({ name: "slow_compute", arguments: { seconds: 0.2, label: "ts" } },
    { task: { ttl: 60000 } });
  report.required = await stream({ name: "failing_job", arguments: {} });
  report.protocolError = await stream({ name: "protocol_error_job", arguments: {} }, { task: { ttl: 60000 } });
  report.got = await client.experimental.tasks.getTask(report.completed.taskId);
  report.listed = (await client.experimental.tasks.listTasks()).tasks.map((task) => task.taskId);
  const long = await client.request(
    { method: "tools/call", params: { name: "slow_compute", arguments: { seconds: 60 }, task: { ttl: 60000 } } },
    CreateTaskResultSchema);
  report.cancelled = await client.experimental.tasks.cancelTask(long.task.taskId);
  try {
    await client.experimental.tasks.cancelTask(long.task.taskId);
  } catch (error) {
    report.errors.cancelAgain = { code: error.code, message: String(error.message) };
  }
  try {
    await client.experimental.tasks.getTask("no-such-task");
  } catch (error) {
    report.errors.unknown = { code: error.code, message: String(error.message) };
  }
} catch (error) {
  report.fatal = String(error?.stack ?? error);
} finally {
  await client.close().catch(() => {});
}
console.log(JSON.stringify(report));
