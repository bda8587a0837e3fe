"""Prompts: arguments from signatures, prompts/list per version, prompts/get and its errors."""

import asyncio
from typing import Annotated

import pytest

from mcpfast.jsonrpc.errors import INTERNAL_ERROR, INVALID_PARAMS, InvalidParams
from mcpfast.server import Audio, Context, EmbeddedResource, Image, PromptMessage, Server

ALL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt " + b"\x00" * 8


def prompt_server():
    app = Server("prompts")

    @app.prompt(title="Code review", argument_titles={"code": "Source code"},
                icons=[{"src": "https://example.org/r.png"}], meta={"k": 1})
    def review(code: Annotated[str, "The code to review"], language: str = "python") -> str:
        """Review some code.

        Args:
            language: the language the code is written in
        """
        return f"Review this {language}:\n{code}"

    @app.prompt()
    def conversation(topic: str) -> list:
        return [
            PromptMessage(f"Tell me about {topic}"),
            PromptMessage("Sure, what do you want to know?", role="assistant"),
            {"role": "user", "content": "Everything"},
            {"role": "assistant", "content": {"type": "text", "text": "OK"}},
            Image(PNG, "image/png"),
            "a closing remark",
        ]

    @app.prompt()
    def media() -> list:
        return [PromptMessage(Audio(WAV, "audio/wav")),
                PromptMessage(EmbeddedResource("mem://doc", "the doc", "text/plain"))]

    @app.prompt()
    def repeat(word: str, times: int = 2) -> str:
        return " ".join([word] * times)

    @app.prompt()
    async def later(name: str, ctx: Context) -> PromptMessage:
        await asyncio.sleep(0)
        return PromptMessage(f"hello {name} from {ctx.protocol_version}")

    @app.prompt()
    def broken() -> str:
        raise RuntimeError("template missing")

    @app.prompt()
    def refuses(flag: str) -> str:
        raise InvalidParams("flag must be yes or no")

    @app.prompt()
    def wrong_shape() -> object:
        return 42

    return app


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_prompt_definitions_per_version(ready_client, version):
    client = ready_client(prompt_server(), version)
    prompts = {p["name"]: p for p in client.result("prompts/list")["prompts"]}
    review = prompts["review"]
    assert review["description"].startswith("Review some code.")
    code_arg = {"name": "code", "description": "The code to review", "required": True}
    if version >= "2025-06-18":
        code_arg["title"] = "Source code"
    assert review["arguments"] == [
        code_arg,
        {"name": "language", "description": "the language the code is written in", "required": False},
    ]
    assert ("title" in review) == (version >= "2025-06-18")
    assert ("_meta" in review) == (version >= "2025-06-18")
    assert ("icons" in review) == (version == "2025-11-25")
    assert "arguments" not in prompts["media"]
    assert "description" not in prompts["media"]


def test_get_with_arguments(ready_client):
    client = ready_client(prompt_server())
    result = client.result("prompts/get", {"name": "review", "arguments": {"code": "x = 1"}})
    assert result == {
        "messages": [{"role": "user", "content": {"type": "text", "text": "Review this python:\nx = 1"}}],
        "description": result["description"],
    }
    assert client.result("prompts/get", {"name": "repeat", "arguments": {"word": "ho", "times": "3"}}) == {
        "messages": [{"role": "user", "content": {"type": "text", "text": "ho ho ho"}}]}


def test_all_message_forms(ready_client):
    client = ready_client(prompt_server())
    messages = client.result("prompts/get", {"name": "conversation", "arguments": {"topic": "owls"}})["messages"]
    assert [(m["role"], m["content"]["type"]) for m in messages] == [
        ("user", "text"), ("assistant", "text"), ("user", "text"), ("assistant", "text"),
        ("user", "image"), ("user", "text"),
    ]
    assert messages[0]["content"]["text"] == "Tell me about owls"
    assert messages[5]["content"]["text"] == "a closing remark"


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_prompt_content_is_downgraded_for_older_versions(ready_client, version):
    client = ready_client(prompt_server(), version)
    audio, embedded = client.result("prompts/get", {"name": "media"})["messages"]
    assert audio["content"]["type"] == ("audio" if version >= "2025-03-26" else "text")
    assert embedded["content"]["type"] == "resource"


@pytest.mark.parametrize("params, fragment", [
    ({"name": "ghost"}, "Unknown prompt: ghost"),
    ({"name": "review"}, "Missing required argument for prompt 'review': code"),
    ({"name": "review", "arguments": {"language": "c"}}, "Missing required argument"),
    ({"name": "review", "arguments": {"code": "x", "extra": "y"}}, "Unknown argument for prompt 'review': extra"),
    ({"name": "review", "arguments": {"code": 5}}, "must be a string"),
    ({"name": "repeat", "arguments": {"word": "a", "times": "many"}}, "Invalid argument for prompt 'repeat'"),
    ({"name": "review", "arguments": ["x"]}, "arguments must be an object"),
    ({}, "params.name must be a string"),
    ({"name": 3}, "params.name must be a string"),
])
def test_get_errors_are_invalid_params(ready_client, params, fragment):
    error = ready_client(prompt_server()).error("prompts/get", params)
    assert error["code"] == INVALID_PARAMS
    assert fragment in error["message"]


def test_failing_prompts_are_internal_errors_with_the_reason(ready_client):
    client = ready_client(prompt_server())
    error = client.error("prompts/get", {"name": "broken"})
    assert error["code"] == INTERNAL_ERROR
    assert error["message"] == "Error rendering prompt 'broken': template missing"
    refused = client.error("prompts/get", {"name": "refuses", "arguments": {"flag": "maybe"}})
    assert refused == {"code": INVALID_PARAMS, "message": "flag must be yes or no"}
    shape = client.error("prompts/get", {"name": "wrong_shape"})
    assert shape["code"] == INTERNAL_ERROR


def test_async_prompt_with_context(ready_client):
    client = ready_client(prompt_server(), "2025-06-18")

    async def main():
        response = await client.arequest("prompts/get", {"name": "later", "arguments": {"name": "ann"}})
        assert response["result"]["messages"][0]["content"]["text"] == "hello ann from 2025-06-18"

    asyncio.run(main())


def test_message_checks_its_parts():
    with pytest.raises(ValueError):
        PromptMessage("hi", role="system")
    with pytest.raises(TypeError):
        PromptMessage(42)
    assert PromptMessage("hi").to_message() == {"role": "user", "content": {"type": "text", "text": "hi"}}


def test_prompt_registration_and_removal(ready_client):
    app = prompt_server()
    client = ready_client(app)

    @app.prompt("custom_name", description="explicit")
    def whatever() -> str:
        return "x"

    assert len(client.notifications("notifications/prompts/list_changed")) == 1
    listed = {p["name"]: p for p in client.result("prompts/list")["prompts"]}
    assert listed["custom_name"]["description"] == "explicit"
    app.remove_prompt("custom_name")
    assert len(client.notifications("notifications/prompts/list_changed")) == 1
    assert client.error("prompts/get", {"name": "custom_name"})["code"] == INVALID_PARAMS
    with pytest.raises(ValueError):
        app.add_prompt(lambda: "x", argument_titles={"nope": "No"})
    with pytest.raises(ValueError):
        app.add_prompt(lambda: "x", name="")
