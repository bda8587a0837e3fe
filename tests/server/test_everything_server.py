"""examples/everything_server.py in every protocol version, through the fake client.

Every tool is called, every resource read, every prompt rendered and completions asked for,
in each supported version, with the client answering the server's sampling, elicitation,
roots and ping requests. Every frame the server emits is validated against that version's
schema by the fake client, so this is the widest schema check of the server: each content
type, each downgrade, each server-to-client request, each notification.
"""

import asyncio
import importlib.util
import json
import sys
from pathlib import Path

import pytest

ALL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "everything_server.py"
CAPABILITIES = {"sampling": {}, "elicitation": {}, "roots": {"listChanged": True}}

ARGUMENTS = {
    "test_python_logging": {"message": "hello from python", "level": "warning"},
    "test_slow_operation": {"seconds": 0},
    "test_structured_output": {"city": "Quito"},
    "json_schema_2020_12_tool": {"name": "n", "address": {"city": "c"}},
    "test_sampling": {"prompt": "What is 2+2?"},
    "test_elicitation": {"message": "Who are you?"},
    "test_header_param": {"region": "us-west1", "query": "select 1"},
    "greet": {"name": "World"},
    "slow_compute": {"seconds": 0, "label": "plain"},
    "confirm_delete": {"filename": "a.txt"},
}
# Tools that run only as tasks (a plain call is refused; tests/server/test_tasks.py).
TASK_ONLY = {"failing_job", "test_tool_with_task"}


@pytest.fixture(scope="module")
def everything():
    spec = importlib.util.spec_from_file_location("mcpfast_example_everything", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    # dataclasses resolve string annotations through sys.modules.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def sample_value(schema):
    if "enum" in schema:
        return schema["enum"][0]
    if "oneOf" in schema:
        return schema["oneOf"][0]["const"]
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items", {})
        return [items["enum"][0]] if "enum" in items else [items["anyOf"][0]["const"]]
    return {"string": "x", "integer": 3, "number": 1.5, "boolean": True}[kind]


def answer(client, request):
    method = request["method"]
    if method == "sampling/createMessage":
        client.respond(request["id"], {"role": "assistant", "model": "test-model",
                                       "content": {"type": "text", "text": "4"}})
    elif method == "elicitation/create":
        properties = request["params"]["requestedSchema"]["properties"]
        client.respond(request["id"], {"action": "accept",
                                       "content": {k: sample_value(v) for k, v in properties.items()}})
    elif method == "roots/list":
        client.respond(request["id"], {"roots": [{"uri": "file:///work", "name": "work"}]})
    elif method == "ping":
        client.respond(request["id"], {})
    else:
        raise AssertionError(f"unexpected request {request}")


async def call(client, name, arguments, meta=None):
    params = {"name": name, "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    id = client.send_request("tools/call", params)
    for _ in range(2000):
        response = client.response(id)
        if response is not None:
            assert "result" in response, response
            return response["result"]
        for request in client.requests():
            answer(client, request)
        await asyncio.sleep(0.001)
    raise AssertionError(f"{name} did not answer")


# Tools that elicit (elicitation exists from 2025-06-18 on).
ELICITING = {"test_input_required_result_elicitation", "test_input_required_result_request_state",
             "test_input_required_result_multiple_inputs", "test_input_required_result_multi_round",
             "test_input_required_result_tampered_state", "test_input_required_result_capabilities",
             "test_streaming_elicitation", "confirm_delete", "multi_input"}


def expected_error(name, version):
    if name in ("test_error_handling", "protocol_error_job"):
        return True
    if name in ELICITING:
        return version < "2025-06-18"
    if name.startswith("test_elicitation"):
        if version < "2025-06-18":
            return True
        if name == "test_elicitation_sep1330_enums" and version < "2025-11-25":
            return True
    return False


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_every_tool_in_every_version(everything, ready_client, version):
    client = ready_client(everything.app, version, capabilities=CAPABILITIES)
    client.result("logging/setLevel", {"level": "debug"})
    client.result("resources/subscribe", {"uri": "test://watched-resource"})
    tools = {tool["name"]: tool for tool in client.result("tools/list")["tools"]}
    names = list(tools)
    assert len(names) >= 24
    assert "outputSchema" not in tools["failing_job"]  # -> ToolResult: no schema of its fields

    async def main():
        results = {}
        for name in names:
            if name in TASK_ONLY:
                continue
            results[name] = await call(client, name, ARGUMENTS.get(name, {}),
                                       meta={"progressToken": f"p-{name}"})
        return results

    results = asyncio.run(main())
    for name, result in results.items():
        assert bool(result.get("isError")) == expected_error(name, version), (name, result)

    assert results["test_simple_text"]["content"] == [
        {"type": "text", "text": "This is a simple text response for testing."}]
    assert results["test_error_handling"]["content"][0]["text"] == \
        "This tool intentionally returns an error for testing"
    assert results["test_sampling"]["content"][0]["text"] == "LLM response: 4"
    assert results["test_list_roots"]["content"][0]["text"] == '[{"uri":"file:///work","name":"work"}]'
    assert results["test_ping_client"]["content"][0]["text"] == "client answered ping"
    assert results["test_notify_resource_updated"]["content"][0]["text"] == \
        "notified 1 subscriber(s) of test://watched-resource"
    audio = results["test_audio_content"]["content"][0]
    assert audio["type"] == ("audio" if version >= "2025-03-26" else "text")
    if version >= "2025-06-18":
        assert results["test_elicitation"]["content"][0]["text"] == \
            'User response: action=accept, content={"username": "x", "email": "x"}'
        assert results["test_structured_output"]["structuredContent"]["city"] == "Quito"

    logs = [n["params"]["data"] for n in client.notifications("notifications/message")]
    assert logs[:3] == ["Tool execution started", "Tool processing data", "Tool execution completed"]
    assert "hello from python" in logs
    progress = [n["params"] for n in client.notifications("notifications/progress")]
    assert [p["progress"] for p in progress if p["progressToken"] == "p-test_tool_with_progress"] == [0, 50, 100]
    assert client.notifications("notifications/resources/updated") == [
        {"jsonrpc": "2.0", "method": "notifications/resources/updated",
         "params": {"uri": "test://watched-resource"}}]
    # test_add_dynamic_tool and test_remove_dynamic_tool each changed the list.
    assert len(client.notifications("notifications/tools/list_changed")) == 2
    assert "dynamic_tool" not in everything.app.tools


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_every_resource_and_template(everything, ready_client, version):
    client = ready_client(everything.app, version)
    uris = [r["uri"] for r in client.result("resources/list")["resources"]]
    assert uris == ["test://static-text", "test://static-binary", "test://watched-resource"]
    assert all(r.get("description") for r in client.result("resources/list")["resources"])
    for uri in uris:
        assert client.result("resources/read", {"uri": uri})["contents"][0]["uri"] == uri
    text = client.result("resources/read", {"uri": "test://static-text"})["contents"][0]
    assert text == {"uri": "test://static-text", "mimeType": "text/plain",
                    "text": "This is the content of the static text resource."}
    templated = client.result("resources/read", {"uri": "test://template/123/data"})["contents"][0]
    assert templated == {"uri": "test://template/123/data", "mimeType": "application/json",
                         "text": '{"id":"123","templateTest":true,"data":"Data for ID: 123"}'}
    templates = client.result("resources/templates/list")["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == ["test://template/{id}/data"]


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_every_prompt_and_completion(everything, ready_client, version):
    client = ready_client(everything.app, version)
    prompts = {p["name"]: p for p in client.result("prompts/list")["prompts"]}
    assert set(prompts) == {"test_simple_prompt", "test_prompt_with_arguments",
                            "test_prompt_with_embedded_resource", "test_prompt_with_image",
                            "test_input_required_result_prompt"}
    assert all(p.get("description") for p in prompts.values())
    simple = client.result("prompts/get", {"name": "test_simple_prompt"})
    assert simple["messages"] == [{"role": "user", "content": {
        "type": "text", "text": "This is a simple prompt for testing."}}]
    with_args = client.result("prompts/get", {"name": "test_prompt_with_arguments",
                                              "arguments": {"arg1": "hello", "arg2": "world"}})
    assert with_args["messages"][0]["content"]["text"] == "Prompt with arguments: arg1='hello', arg2='world'"
    embedded = client.result("prompts/get", {"name": "test_prompt_with_embedded_resource",
                                             "arguments": {"resourceUri": "test://example-resource"}})
    assert embedded["messages"][0]["content"] == {"type": "resource", "resource": {
        "uri": "test://example-resource", "mimeType": "text/plain",
        "text": "Embedded resource content for testing."}}
    assert embedded["messages"][1]["content"]["text"] == "Please process the embedded resource above."
    image = client.result("prompts/get", {"name": "test_prompt_with_image"})
    assert image["messages"][0]["content"]["type"] == "image"

    completion = client.result("completion/complete", {
        "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
        "argument": {"name": "arg1", "value": "par"}})
    assert completion == {"completion": {"values": ["paris", "park", "party"]}}
    completion = client.result("completion/complete", {
        "ref": {"type": "ref/resource", "uri": "test://template/{id}/data"},
        "argument": {"name": "id", "value": "12"}})
    assert completion == {"completion": {"values": ["123"]}}


def test_json_schema_2020_12_tool_keeps_its_keywords(everything, ready_client):
    client = ready_client(everything.app)
    tool = {t["name"]: t for t in client.result("tools/list")["tools"]}["json_schema_2020_12_tool"]
    schema = tool["inputSchema"]
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$defs"]["address"]["properties"] == {"street": {"type": "string"}, "city": {"type": "string"}}
    assert schema["additionalProperties"] is False
    # SEP-2106: composition, conditional and $anchor keywords survive tools/list.
    assert schema["$defs"]["address"]["$anchor"] == "addressDef"
    assert schema["allOf"] == [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}]
    assert schema["then"] == {"required": ["phone"]} and schema["else"] == {"required": ["email"]}
    assert tool["description"] == "Tool with JSON Schema 2020-12 features"
    called = client.call_tool("json_schema_2020_12_tool", {"name": "n", "email": "n@example.com"})
    assert json.loads(called["content"][0]["text"]) == {
        "name": "n", "address": None, "contactMethod": None, "phone": None, "email": "n@example.com"}
