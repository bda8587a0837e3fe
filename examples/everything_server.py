"""An MCP server exercising every feature of mcpfast's server, with conformance fixtures.

    python examples/everything_server.py                 # serves stdio
    python examples/everything_server.py tcp 8765        # newline-framed TCP on 127.0.0.1:8765

The tool, resource and prompt names are the fixtures the official conformance suite
(npm @modelcontextprotocol/conformance, its server scenarios) calls: test_simple_text,
test_image_content, test_audio_content, test_embedded_resource,
test_multiple_content_types, test_tool_with_logging, test_tool_with_progress,
test_error_handling, test_sampling, test_elicitation, test_elicitation_sep1034_defaults,
test_elicitation_sep1330_enums, json_schema_2020_12_tool (and for 2026-07-28:
test_logging_tool, test_missing_capability, test_header_param, test_streaming_elicitation and the
test_input_required_result_* tools and prompt); resources test://static-text,
test://static-binary, test://watched-resource and the template test://template/{id}/data;
prompts test_simple_prompt, test_prompt_with_arguments,
test_prompt_with_embedded_resource, test_prompt_with_image; completion for
test_prompt_with_arguments and the template. Further tools show structured output,
resource links, roots, cancellation, Python logging forwarded to the client, resource
update notifications and tools added or removed at run time (list_changed).
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
import io
import json
import logging
import struct
import sys
import wave
import zlib
from pathlib import Path
from typing import Annotated, Optional, TypedDict

if importlib.util.find_spec("mcpfast") is None:  # run from a source checkout, not installed
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcpfast.jsonrpc import INTERNAL_ERROR, JSONRPCError  # noqa: E402
from mcpfast.server import (  # noqa: E402
    Audio,
    Context,
    EmbeddedResource,
    Field,
    Image,
    PromptMessage,
    ResourceLink,
    Server,
    ToolAnnotations,
    ToolResult,
)


def _png_1x1_red() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + chunk(b"IEND", b""))


def _wav_silence() -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(1)
        out.setframerate(8000)
        out.writeframes(b"\x80" * 8)
    return buffer.getvalue()


PNG = _png_1x1_red()
WAV = _wav_silence()

app = Server(
    "mcpfast-everything",
    version="1.0.0",
    title="mcpfast everything server",
    description="Every MCP server feature of mcpfast, with the conformance suite's fixtures",
    website_url="https://github.com/mcpfast/mcpfast",
    instructions="A test server: every tool, resource and prompt exists to exercise one MCP feature.",
)

# Python logging, forwarded to connected clients as notifications/message.
python_log = logging.getLogger("everything")
python_log.setLevel(logging.DEBUG)
python_log.addHandler(app.logging_handler())
python_log.propagate = False


# -- tools: content types --------------------------------------------------------------


@app.tool(annotations=ToolAnnotations(read_only=True, idempotent=True, open_world=False))
def test_simple_text() -> str:
    """Returns a simple text response."""
    return "This is a simple text response for testing."


@app.tool()
def test_image_content() -> Image:
    """Returns a 1x1 red PNG image."""
    return Image(PNG, "image/png")


@app.tool()
def test_audio_content() -> Audio:
    """Returns a short silent WAV clip."""
    return Audio(WAV, "audio/wav")


@app.tool()
def test_embedded_resource() -> EmbeddedResource:
    """Returns an embedded text resource."""
    return EmbeddedResource("test://embedded-resource", "This is an embedded resource content.", "text/plain")


@app.tool()
def test_multiple_content_types() -> list:
    """Returns text, an image and an embedded resource together."""
    return [
        "Multiple content types test:",
        Image(PNG, "image/png"),
        EmbeddedResource(
            "test://mixed-content-resource", json.dumps({"test": "data", "value": 123}, separators=(",", ":")),
            "application/json",
        ),
    ]


@app.tool(title="Resource link")
def test_resource_link() -> ResourceLink:
    """Returns a link to the static text resource (a text line for clients before 2025-06-18)."""
    return ResourceLink("test://static-text", "static-text", title="Static text",
                        mime_type="text/plain", description="The static text resource")


# -- tools: logging, progress, errors, cancellation ------------------------------------


@app.tool()
async def test_tool_with_logging(ctx: Context) -> str:
    """Sends three info log messages while it runs."""
    await ctx.info("Tool execution started")
    await asyncio.sleep(0.05)
    await ctx.info("Tool processing data")
    await asyncio.sleep(0.05)
    await ctx.info("Tool execution completed")
    return "Tool with logging executed successfully"


@app.tool()
async def test_logging_tool(ctx: Context) -> str:
    """Logs at info, warning and error (sent only to clients that asked for logs: under
    2026-07-28, requests that set a logLevel)."""
    ctx.info("logging tool: info")
    ctx.warning("logging tool: warning")
    ctx.error("logging tool: error")
    return "logged"


@app.tool()
async def test_missing_capability(ctx: Context) -> str:
    """Needs the client's sampling capability: refused with -32021 when the request does
    not declare it (2026-07-28)."""
    answer = await ctx.sample("Say hello", max_tokens=20)
    return f"LLM response: {answer.text}"


@app.tool()
async def test_tool_with_progress(ctx: Context) -> str:
    """Reports progress 0, 50 and 100 of 100 when the client asks for progress."""
    await ctx.report_progress(0, 100)
    await asyncio.sleep(0.05)
    await ctx.report_progress(50, 100, "halfway")
    await asyncio.sleep(0.05)
    await ctx.report_progress(100, 100, "done")
    return f"Progress tool completed (token {ctx.progress.token if ctx.progress else None})"


@app.tool()
def test_error_handling() -> str:
    """Always fails: the result has isError true."""
    raise RuntimeError("This tool intentionally returns an error for testing")


@app.tool()
def test_python_logging(message: str, level: str = "info") -> str:
    """Logs through Python's logging module; the record reaches the client."""
    python_log.log(logging.getLevelName(level.upper()), message)
    return f"logged {message!r} at {level}"


@app.tool(annotations=ToolAnnotations(read_only=True))
async def test_slow_operation(seconds: Annotated[float, Field(ge=0, le=60)], ctx: Context) -> str:
    """Sleeps for the given seconds, reporting progress; cancel it with notifications/cancelled."""
    steps = 10
    try:
        for step in range(1, steps + 1):
            await asyncio.sleep(seconds / steps)
            ctx.report_progress(step, steps)
    except asyncio.CancelledError:
        # The client sent notifications/cancelled: the task is cancelled, no reply is sent.
        _cancellations.append(ctx.cancel_reason)
        raise
    return f"slept {seconds} s"


_cancellations: list = []


@app.tool(annotations=ToolAnnotations(read_only=True))
def test_cancellations() -> list:
    """The reasons given for the cancelled calls of test_slow_operation so far."""
    return [str(reason) for reason in _cancellations]


# -- tools: structured output ----------------------------------------------------------


@dataclasses.dataclass
class Weather:
    """Weather at a place."""

    city: str
    temperature_c: float
    conditions: str
    humidity: Optional[int] = None


@app.tool(annotations={"readOnlyHint": True, "openWorldHint": False})
def test_structured_output(city: str) -> Weather:
    """Weather for a city, as structured content with an output schema."""
    return Weather(city=city, temperature_c=21.5, conditions="sunny", humidity=40)


class Address(TypedDict, total=False):
    street: str
    city: str


@app.tool(
    description="Tool with JSON Schema 2020-12 features",
    input_schema={
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"},
        },
        # Composition and conditional keywords (SEP-2106): a way to be reached is needed,
        # and phone when that is the chosen way, email otherwise.
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": False,
    },
)
def json_schema_2020_12_tool(name: Optional[str] = None, address: Optional[Address] = None,
                             contactMethod: Optional[str] = None, phone: Optional[str] = None,
                             email: Optional[str] = None) -> str:
    return json.dumps({"name": name, "address": address, "contactMethod": contactMethod,
                       "phone": phone, "email": email})


# -- tools: requests to the client ----------------------------------------------------


@app.tool()
async def test_sampling(prompt: str, ctx: Context) -> str:
    """Asks the client's LLM (sampling/createMessage) and returns its answer."""
    answer = await ctx.sample(prompt, max_tokens=100)
    return f"LLM response: {answer.text}"


@app.tool()
async def test_elicitation(message: str, ctx: Context) -> str:
    """Asks the user for a username and an email (elicitation/create)."""
    result = await ctx.elicit(message, {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    })
    return f"User response: action={result.action}, content={json.dumps(result.content)}"


@app.tool()
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    """Elicitation whose fields all have default values (SEP-1034)."""
    result = await ctx.elicit("Please review and update the form fields with defaults", {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {"type": "string", "description": "User status",
                       "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "description": "Verification status", "default": True},
        },
    })
    return f"Elicitation completed: action={result.action}, content={json.dumps(result.content)}"


@app.tool()
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    """Elicitation with the five enum schema forms (SEP-1330)."""
    result = await ctx.elicit("Please select options from the enum fields", {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "description": "Select one option",
                               "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "description": "Select one option with titles",
                             "oneOf": [{"const": "value1", "title": "First Option"},
                                       {"const": "value2", "title": "Second Option"},
                                       {"const": "value3", "title": "Third Option"}]},
            "legacyEnum": {"type": "string", "description": "Select one option (legacy)",
                           "enum": ["opt1", "opt2", "opt3"],
                           "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "description": "Select multiple options",
                              "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "description": "Select multiple options with titles",
                            "items": {"anyOf": [{"const": "value1", "title": "First Choice"},
                                                {"const": "value2", "title": "Second Choice"},
                                                {"const": "value3", "title": "Third Choice"}]}},
        },
    })
    return f"Elicitation completed: action={result.action}, content={json.dumps(result.content)}"


@dataclasses.dataclass
class Signup:
    username: str
    age: int
    newsletter: bool = False


@app.tool()
async def test_elicitation_dataclass(ctx: Context) -> str:
    """Elicitation from a dataclass; the answer comes back as an instance."""
    result = await ctx.elicit("Sign up", Signup)
    if not result.accepted:
        return f"not signed up ({result.action})"
    signup: Signup = result.data
    return f"signed up {signup.username} (age {signup.age}, newsletter {signup.newsletter})"


@app.tool()
async def test_list_roots(ctx: Context) -> list:
    """The client's roots (roots/list)."""
    return [{"uri": root.uri, "name": root.name} for root in await ctx.list_roots()]


@app.tool()
async def test_ping_client(ctx: Context) -> str:
    """Pings the client and reports that it answered."""
    await ctx.ping()
    return "client answered ping"


# -- tools: run-time changes -----------------------------------------------------------


@app.tool()
def test_notify_resource_updated(uri: str = "test://watched-resource") -> str:
    """Sends notifications/resources/updated for a URI to the clients subscribed to it."""
    count = app.notify_resource_updated(uri)
    return f"notified {count} subscriber(s) of {uri}"


def dynamic_tool(value: str) -> str:
    """A tool that exists only after test_add_dynamic_tool ran."""
    return f"dynamic: {value}"


@app.tool()
def test_add_dynamic_tool() -> str:
    """Registers the tool 'dynamic_tool' (clients get notifications/tools/list_changed)."""
    app.add_tool(dynamic_tool)
    return "added dynamic_tool"


@app.tool()
def test_remove_dynamic_tool() -> str:
    """Removes the tool 'dynamic_tool' again."""
    try:
        app.remove_tool("dynamic_tool")
    except KeyError:
        return "dynamic_tool was not registered"
    return "removed dynamic_tool"


@app.tool(
    description="Runs a query in a region; the region is mirrored into the Mcp-Param-Region header",
    input_schema={
        "type": "object",
        "properties": {
            "region": {"type": "string", "description": "Where to run", "x-mcp-header": "Region"},
            "query": {"type": "string", "description": "What to run"},
        },
        "required": ["region"],
    },
)
def test_header_param(region: str, query: str = "") -> str:
    return f"ran {query!r} in {region}"


# -- 2026-07-28: questions to the client as InputRequiredResult round trips -------------
# The same ctx.elicit / sample / list_roots as above; under 2026-07-28 each ends the attempt
# with an InputRequiredResult and the client's retry brings the answer. input_key names
# the question (the conformance suite expects these keys).

NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@app.tool()
async def test_input_required_result_elicitation(ctx: Context) -> str:
    """Asks the user's name (key user_name), then greets them."""
    answer = await ctx.elicit("What is your name?", NAME_FORM, input_key="user_name")
    return f"Hello, {(answer.content or {}).get('name', 'stranger')}!"


@app.tool()
async def test_input_required_result_sampling(ctx: Context) -> str:
    """Asks the client's LLM a question and returns its answer."""
    answer = await ctx.sample("What is the capital of France?", max_tokens=100,
                              input_key="capital_of_france")
    return f"LLM response: {answer.text}"


@app.tool()
async def test_input_required_result_list_roots(ctx: Context) -> str:
    """Asks for the client's roots and lists them."""
    roots = await ctx.list_roots(input_key="client_roots")
    return "Roots: " + ", ".join(root.uri for root in roots)


@app.tool()
async def test_input_required_result_request_state(ctx: Context) -> str:
    """A round trip whose answer comes back with its signed requestState."""
    answer = await ctx.elicit("Please confirm", {"type": "object", "properties": {
        "confirmed": {"type": "boolean"}}, "required": ["confirmed"]}, input_key="confirm")
    return f"state-ok: confirmed={bool((answer.content or {}).get('confirmed'))}"


@app.tool()
async def test_input_required_result_multiple_inputs(ctx: Context) -> str:
    """Three questions at once: elicitation, sampling and roots."""
    name, capital, roots = await asyncio.gather(
        ctx.elicit("What is your name?", NAME_FORM, input_key="user_name"),
        ctx.sample("What is the capital of France?", max_tokens=100, input_key="capital"),
        ctx.list_roots(input_key="roots"),
    )
    return (f"name={(name.content or {}).get('name')} capital={capital.text} "
            f"roots={len(roots)}")


@app.tool()
async def test_input_required_result_multi_round(ctx: Context) -> str:
    """Two rounds: the second question is asked once the first is answered."""
    first = await ctx.elicit("Step 1: What is your name?", NAME_FORM, input_key="step1")
    second = await ctx.elicit("Step 2: What is your favorite color?", {
        "type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]},
        input_key="step2")
    return (f"{(first.content or {}).get('name')} likes "
            f"{(second.content or {}).get('color')}")


# The same question, served under the name the tampered-requestState scenario calls.
app.tool(name="test_input_required_result_tampered_state",
         description="A round trip whose requestState the client must not change.")(
    test_input_required_result_elicitation)


@app.tool()
async def test_input_required_result_capabilities(ctx: Context) -> str:
    """Asks only what the request's client capabilities allow."""
    capabilities = ctx.client_capabilities
    asked = []
    if "elicitation" in capabilities:
        asked.append(ctx.elicit("What is your name?", NAME_FORM, input_key="user_name"))
    if "sampling" in capabilities:
        asked.append(ctx.sample("Say hello", max_tokens=20, input_key="greeting"))
    answers = await asyncio.gather(*asked)
    return f"{len(answers)} answer(s)"


@app.tool()
async def test_streaming_elicitation(ctx: Context) -> str:
    """Reports progress, then asks a question: its stream carries only notifications and
    the final InputRequiredResult, never a request."""
    await ctx.report_progress(1, 2, "asking")
    answer = await ctx.elicit("What is your name?", NAME_FORM, input_key="user_name")
    await ctx.report_progress(2, 2, "answered")
    return f"Hello, {(answer.content or {}).get('name')}!"


# -- tasks (the 2026-07-28 extension io.modelcontextprotocol/tasks; 2025-11-25 tasks) -----

_CONFIRM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}
_NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@app.tool()
def greet(name: str) -> str:
    """Greets by name (never a task)."""
    return f"Hello, {name}!"


@app.tool(task_support="optional")
async def slow_compute(seconds: Annotated[float, Field(ge=0, le=600)], label: str = "") -> str:
    """Sleeps for `seconds`, then reports; runs as a task when the client allows."""
    await asyncio.sleep(seconds)
    return f"computed {label or 'result'} after {seconds:g} s"


@app.tool(task_support="required")
async def failing_job() -> ToolResult:
    """Ends with a tool error after about a second (only as a task)."""
    await asyncio.sleep(1.0)
    return ToolResult("the job failed, as it always does", is_error=True)


@app.tool(task_support="optional")
async def protocol_error_job() -> str:
    """Fails with a JSON-RPC error (a failed task)."""
    await asyncio.sleep(0.05)
    raise JSONRPCError(INTERNAL_ERROR, "Internal error: the job broke down")


@app.tool(task_support="optional")
async def confirm_delete(filename: str, ctx: Context) -> str:
    """Asks the user to confirm, then 'deletes' the file."""
    answer = await ctx.elicit(f"Delete {filename}?", _CONFIRM, input_key="confirm")
    if answer.action == "accept" and answer.content.get("confirm"):
        return f"Deleted {filename}"
    return f"Kept {filename}"


@app.tool(task_support="optional")
async def multi_input(ctx: Context) -> str:
    """Asks two questions side by side (both pending at once)."""
    name, confirm = await asyncio.gather(
        ctx.elicit("Your name?", _NAME, input_key="name"),
        ctx.elicit("Proceed?", _CONFIRM, input_key="proceed"))
    return f"name={name.content.get('name')!r} proceed={confirm.content.get('confirm')!r}"


@app.tool(task_support="required", task_start="handler")
async def test_tool_with_task(ctx: Context) -> str:
    """Asks for a name on the request itself, then goes on as a task that greets."""
    answer = await ctx.elicit("What is your name?", _NAME, input_key="user_name")
    await ctx.run_as_task()
    await asyncio.sleep(0.05)
    return f"Hello, {answer.content.get('name', 'stranger')}!"


# -- resources -------------------------------------------------------------------------


@app.resource("test://static-text", name="static-text", mime_type="text/plain",
              description="A static text resource")
def static_text() -> str:
    return "This is the content of the static text resource."


@app.resource("test://static-binary", name="static-binary", mime_type="image/png",
              description="A static binary resource (a 1x1 PNG)", size=len(PNG))
def static_binary() -> bytes:
    return PNG


_watched = {"version": 0}


@app.resource("test://watched-resource", name="watched-resource", mime_type="text/plain",
              description="A resource clients can subscribe to (see test_notify_resource_updated)")
def watched_resource() -> str:
    _watched["version"] += 1
    return f"watched resource, read #{_watched['version']}"


@app.resource("test://template/{id}/data", name="template-data", mime_type="application/json",
              description="Data for an id (a resource template)")
def template_data(id: str) -> dict:
    return {"id": id, "templateTest": True, "data": f"Data for ID: {id}"}


# -- prompts ---------------------------------------------------------------------------


@app.prompt()
async def test_input_required_result_prompt(ctx: Context) -> str:
    """A prompt that first asks the user what context to use."""
    answer = await ctx.elicit("What context should the prompt use?", {
        "type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]},
        input_key="user_context")
    return f"Use this context: {(answer.content or {}).get('context')}"


@app.prompt()
def test_simple_prompt() -> str:
    """A prompt without arguments."""
    return "This is a simple prompt for testing."


@app.prompt()
def test_prompt_with_arguments(
    arg1: Annotated[str, "First test argument"],
    arg2: Annotated[str, "Second test argument"],
) -> str:
    """A prompt with two required arguments."""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@app.prompt()
def test_prompt_with_embedded_resource(resourceUri: Annotated[str, "URI of the resource to embed"]) -> list:
    """A prompt embedding a resource."""
    return [
        PromptMessage(EmbeddedResource(resourceUri, "Embedded resource content for testing.", "text/plain")),
        PromptMessage("Please process the embedded resource above."),
    ]


@app.prompt()
def test_prompt_with_image() -> list:
    """A prompt with an image."""
    return [PromptMessage(Image(PNG, "image/png")), PromptMessage("Please analyze the image above.")]


# -- completion ------------------------------------------------------------------------

_WORDS = ["paris", "park", "party", "pasta", "patio", "test", "testing", "tested"]


@app.completion()
def complete(ref, argument, context) -> list:
    """Suggestions for test_prompt_with_arguments' arguments and the template's id."""
    if ref.type == "prompt" and ref.name == "test_prompt_with_arguments":
        return [word for word in _WORDS if word.startswith(argument.value)]
    if ref.type == "resource" and ref.uri == "test://template/{id}/data" and argument.name == "id":
        return [str(n) for n in (1, 2, 3, 123) if str(n).startswith(argument.value)]
    return []


def main(argv: list[str]) -> None:
    if not argv or argv == ["stdio"]:
        app.run("stdio")
    elif len(argv) == 2 and argv[0] == "tcp":
        app.run("tcp", host="127.0.0.1", port=int(argv[1]))
    elif len(argv) == 2 and argv[0] == "websocket":
        app.run("websocket", host="127.0.0.1", port=int(argv[1]))
    elif len(argv) >= 2 and argv[0] == "http":
        # http PORT [stateless] [json] [legacy]: Streamable HTTP on 127.0.0.1:PORT/mcp
        # (legacy: also 2024-11-05 HTTP+SSE on /sse and /messages)
        app.run("http", host="127.0.0.1", port=int(argv[1]),
                stateless="stateless" in argv[2:], json_response="json" in argv[2:],
                legacy_sse="legacy" in argv[2:])
    else:
        sys.exit("usage: everything_server.py [stdio | tcp PORT | websocket PORT | "
                 "http PORT [stateless] [json] [legacy]]")


if __name__ == "__main__":
    main(sys.argv[1:])
