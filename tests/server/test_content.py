"""Tests for mcpfast.server.content: return values -> MCP content blocks, version downgrades."""

from __future__ import annotations

import base64
import dataclasses
import datetime
import enum
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_spec import SPEC_VERSIONS, spec_definitions, spec_validator
from mcpfast.server.content import (
    Annotations,
    Audio,
    ContentItem,
    EmbeddedResource,
    Image,
    ResourceLink,
    Text,
    downgrade_content,
    is_content_block,
    resource_contents,
    to_content,
    tool_error_result,
    tool_result,
)
from mcpfast.server.schema import OutputError, function_schema

VERSIONS = list(SPEC_VERSIONS)

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16
JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 16
GIF = b"GIF89a" + b"\x00" * 16
WEBP = b"RIFF\x00\x00\x00\x00WEBPVP8 "
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt "
MP3 = b"ID3\x03\x00" + b"\x00" * 10
OGG = b"OggS" + b"\x00" * 10
FLAC = b"fLaC" + b"\x00" * 10


def assert_valid(version: str, definition: str, instance) -> None:
    errors = [e.message for e in spec_validator(version, definition).iter_errors(instance)]
    assert not errors, (version, definition, errors)


_BLOCK_DEFINITION = {
    "text": "TextContent",
    "image": "ImageContent",
    "audio": "AudioContent",
    "resource": "EmbeddedResource",
    "resource_link": "ResourceLink",
}


def assert_strictly_in_version(block: dict, version: str) -> None:
    """Every key of the block (and of its annotations / resource contents) is a property the
    version's schema defines: the published schemas allow extra keys, so validation alone
    would not notice a field the version does not know."""
    defs = spec_definitions(version)
    definition = defs[_BLOCK_DEFINITION[block["type"]]]
    properties = definition["properties"]
    assert set(block) <= set(properties), (version, set(block) - set(properties))
    if "annotations" in block:
        annotation_schema = properties["annotations"]
        if "$ref" in annotation_schema:
            annotation_schema = defs[annotation_schema["$ref"].rsplit("/", 1)[1]]
        assert set(block["annotations"]) <= set(annotation_schema["properties"]), version
    if block["type"] == "resource":
        kind = "TextResourceContents" if "text" in block["resource"] else "BlobResourceContents"
        assert set(block["resource"]) <= set(defs[kind]["properties"]), version


def assert_blocks_valid(blocks: list[dict], version: str = "2025-11-25") -> None:
    result_type = {"resultType": "complete"} if version >= "2026-07-28" else {}
    assert_valid(version, "CallToolResult", {"content": blocks, **result_type})
    for block in blocks:
        if version >= "2025-06-18":
            assert_valid(version, "ContentBlock", block)
        assert_strictly_in_version(block, version)


# ---------------------------------------------------------------------------------------------
# to_content: plain values


class Mood(enum.Enum):
    HAPPY = "happy"


@dataclasses.dataclass
class Weather:
    city: str
    degrees: float
    mood: Mood = Mood.HAPPY


def test_str_none_and_plain_data():
    assert to_content("hello") == [{"type": "text", "text": "hello"}]
    assert to_content("") == [{"type": "text", "text": ""}]
    assert to_content(None) == []
    assert to_content(42) == [{"type": "text", "text": "42"}]
    assert to_content(2.5) == [{"type": "text", "text": "2.5"}]
    assert to_content(True) == [{"type": "text", "text": "true"}]
    assert to_content({"a": [1, None], "é": "ü"}) == [{"type": "text", "text": '{"a":[1,null],"é":"ü"}'}]
    assert to_content([1, "two", {"three": 3}]) == [{"type": "text", "text": '[1,"two",{"three":3}]'}]
    assert to_content(("a", "b")) == [{"type": "text", "text": '["a","b"]'}]
    assert to_content([]) == [{"type": "text", "text": "[]"}]
    assert to_content(Weather("Paris", 21.5)) == [
        {"type": "text", "text": '{"city":"Paris","degrees":21.5,"mood":"happy"}'}
    ]
    assert to_content(Mood.HAPPY) == [{"type": "text", "text": '"happy"'}]
    assert to_content(datetime.date(2025, 1, 2)) == [{"type": "text", "text": '"2025-01-02"'}]
    for value in ("x", 1, {"a": 1}, [1], Weather("a", 1)):
        assert_blocks_valid(to_content(value))


def test_values_without_json_form_are_refused():
    with pytest.raises(TypeError, match="Image, Audio or EmbeddedResource"):
        to_content(b"raw")
    with pytest.raises(TypeError, match="Image, Audio or EmbeddedResource"):
        to_content(bytearray(b"raw"))
    with pytest.raises(TypeError, match="object"):
        to_content(object())
    with pytest.raises(ValueError):
        to_content(math.nan)
    with pytest.raises(ValueError):
        to_content({"x": math.inf})


# ---------------------------------------------------------------------------------------------
# content classes


def test_text_block_with_annotations_and_meta():
    block = Text(
        "hi",
        annotations=Annotations(audience=["user"], priority=0.5, last_modified="2025-01-12T15:00:58Z"),
        meta={"com.example/x": 1},
    ).to_dict()
    assert block == {
        "type": "text",
        "text": "hi",
        "annotations": {"audience": ["user"], "priority": 0.5, "lastModified": "2025-01-12T15:00:58Z"},
        "_meta": {"com.example/x": 1},
    }
    assert_blocks_valid([block])
    assert to_content(Text("x")) == [{"type": "text", "text": "x"}]


def test_annotations_forms_and_checks():
    moment = datetime.datetime(2025, 5, 3, 14, 30, tzinfo=datetime.timezone.utc)
    assert Annotations(last_modified=moment).to_dict() == {"lastModified": "2025-05-03T14:30:00+00:00"}
    assert Annotations().to_dict() == {}
    # Empty annotations are left out of the block.
    assert Text("x", annotations=Annotations()).to_dict() == {"type": "text", "text": "x"}
    wire = {"audience": ["assistant", "user"], "priority": 1, "lastModified": "2025-01-01T00:00:00Z"}
    assert Text("x", annotations=wire).to_dict()["annotations"] == wire
    with pytest.raises(ValueError, match="audience"):
        Annotations(audience=["robot"])
    with pytest.raises(ValueError, match="audience"):
        Annotations(audience="user")
    with pytest.raises(ValueError, match="priority"):
        Annotations(priority=1.5)
    with pytest.raises(ValueError, match="priority"):
        Annotations(priority=True)
    with pytest.raises(ValueError, match="priority"):
        Annotations(priority=math.nan)
    with pytest.raises(ValueError, match="last_modified"):
        Annotations(last_modified=3)
    with pytest.raises(ValueError, match="unknown annotation keys: color"):
        Text("x", annotations={"color": "red"})
    with pytest.raises(TypeError, match="annotations"):
        Text("x", annotations=["user"])
    with pytest.raises(TypeError, match="meta"):
        Text("x", meta=["not", "a", "dict"])
    with pytest.raises(TypeError, match="str"):
        Text(3)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "data, mime",
    [(PNG, "image/png"), (JPEG, "image/jpeg"), (GIF, "image/gif"), (WEBP, "image/webp")],
)
def test_image_from_bytes_sniffs_the_mime_type(data, mime):
    block = Image(data).to_dict()
    assert block == {"type": "image", "data": base64.b64encode(data).decode(), "mimeType": mime}
    assert_blocks_valid([block])


def test_image_explicit_mime_type_bytes_like_and_annotations():
    block = Image(memoryview(b"abc"), "image/x-custom", annotations={"audience": ["user"], "priority": 0.9}).to_dict()
    assert block == {
        "type": "image",
        "data": "YWJj",
        "mimeType": "image/x-custom",
        "annotations": {"audience": ["user"], "priority": 0.9},
    }
    assert Image(bytearray(PNG)).data == PNG


def test_image_from_path(tmp_path):
    path = tmp_path / "chart.jpg"
    path.write_bytes(b"not really a jpeg")
    image = Image(path)
    assert image.mime_type == "image/jpeg"  # from the file name
    assert image.to_dict()["data"] == base64.b64encode(b"not really a jpeg").decode()
    unnamed = tmp_path / "blob"
    unnamed.write_bytes(PNG)
    assert Image(str(unnamed)).mime_type == "image/png"  # from the signature
    with pytest.raises(FileNotFoundError):
        Image(tmp_path / "missing.png")


def test_image_without_a_known_type_needs_mime_type(tmp_path):
    with pytest.raises(ValueError, match="mime_type"):
        Image(b"plain bytes")
    odd = tmp_path / "data.txt"  # a text/plain guess does not count for an image
    odd.write_bytes(b"xyz")
    with pytest.raises(ValueError, match="mime_type"):
        Image(odd)
    with pytest.raises(ValueError, match="invalid MIME type"):
        Image(PNG, "png")
    with pytest.raises(TypeError, match="bytes or a file path"):
        Image(123)  # type: ignore[arg-type]


def test_image_from_base64():
    encoded = base64.b64encode(PNG).decode()
    assert Image.from_base64(encoded, "image/png").to_dict()["data"] == encoded
    with pytest.raises(ValueError, match="base64"):
        Image.from_base64("not base64!", "image/png")


def test_image_is_immutable_and_comparable():
    image = Image(PNG)
    with pytest.raises(dataclasses.FrozenInstanceError):
        image.data = b""  # type: ignore[misc]
    assert image == Image(PNG, "image/png")
    assert image != Image(PNG, "image/x-other")
    assert image != Audio(PNG, "audio/wav")
    assert "20 bytes" in repr(Image(b"\x00" * 20, "image/png"))
    assert isinstance(image, ContentItem)


@pytest.mark.parametrize(
    "data, mime",
    [(WAV, "audio/wav"), (MP3, "audio/mpeg"), (OGG, "audio/ogg"), (FLAC, "audio/flac")],
)
def test_audio(data, mime):
    block = Audio(data).to_dict()
    assert block == {"type": "audio", "data": base64.b64encode(data).decode(), "mimeType": mime}
    assert_blocks_valid([block])
    assert_blocks_valid([block], "2025-03-26")


def test_audio_from_path(tmp_path):
    path = tmp_path / "clip.mp3"
    path.write_bytes(b"\x00\x01")
    assert Audio(path).mime_type == "audio/mpeg"
    with pytest.raises(ValueError, match="mime_type"):
        Audio(b"\x00\x01")


def test_embedded_resources():
    text = EmbeddedResource("file:///a.rs", "fn main() {}", "text/x-rust").to_dict()
    assert text == {
        "type": "resource",
        "resource": {"uri": "file:///a.rs", "mimeType": "text/x-rust", "text": "fn main() {}"},
    }
    blob = EmbeddedResource("file:///a.bin", b"\x00\xff", annotations={"priority": 0.2}).to_dict()
    assert blob == {
        "type": "resource",
        "resource": {"uri": "file:///a.bin", "blob": "AP8="},
        "annotations": {"priority": 0.2},
    }
    data = EmbeddedResource("data://x", {"k": [1, 2]}).to_dict()
    assert data["resource"] == {"uri": "data://x", "mimeType": "application/json", "text": '{"k":[1,2]}'}
    assert_blocks_valid([text, blob, data])
    for version in VERSIONS:
        assert_blocks_valid(downgrade_content([text, blob, data], version), version)
    with pytest.raises(ValueError, match="URI"):
        EmbeddedResource("", "x")
    with pytest.raises(TypeError):
        EmbeddedResource("file:///x", object())


def test_resource_link():
    block = ResourceLink(
        "file:///project/src/main.rs",
        "main.rs",
        title="Main",
        description="Primary application entry point",
        mime_type="text/x-rust",
        size=120,
        annotations={"audience": ["assistant"]},
        icons=[{"src": "https://example.com/i.png", "mimeType": "image/png", "sizes": ["48x48"]}],
        meta={"k": "v"},
    ).to_dict()
    assert block == {
        "type": "resource_link",
        "uri": "file:///project/src/main.rs",
        "name": "main.rs",
        "title": "Main",
        "description": "Primary application entry point",
        "mimeType": "text/x-rust",
        "size": 120,
        "icons": [{"src": "https://example.com/i.png", "mimeType": "image/png", "sizes": ["48x48"]}],
        "annotations": {"audience": ["assistant"]},
        "_meta": {"k": "v"},
    }
    assert_blocks_valid([block])
    assert_blocks_valid([block], "2026-07-28")
    minimal = ResourceLink("x://y", "y").to_dict()
    assert minimal == {"type": "resource_link", "uri": "x://y", "name": "y"}
    assert_blocks_valid([minimal], "2025-06-18")


def test_resource_link_checks():
    with pytest.raises(ValueError, match="URI"):
        ResourceLink(None, "n")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="name"):
        ResourceLink("x://y", "")
    with pytest.raises(ValueError, match="size"):
        ResourceLink("x://y", "y", size=-1)
    with pytest.raises(ValueError, match="size"):
        ResourceLink("x://y", "y", size=True)
    with pytest.raises(TypeError, match="title"):
        ResourceLink("x://y", "y", title=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="src"):
        ResourceLink("x://y", "y", icons=[{"mimeType": "image/png"}])


# ---------------------------------------------------------------------------------------------
# raw blocks and lists


def test_raw_content_blocks_pass_through():
    blocks = [
        {"type": "text", "text": "t"},
        {"type": "image", "data": "AA==", "mimeType": "image/png"},
        {"type": "audio", "data": "AA==", "mimeType": "audio/wav"},
        {"type": "resource", "resource": {"uri": "x://a", "text": "a"}},
        {"type": "resource", "resource": {"uri": "x://a", "blob": "AA=="}},
        {"type": "resource_link", "uri": "x://a", "name": "a"},
    ]
    for block in blocks:
        assert is_content_block(block)
        result = to_content(block)
        assert result == [block] and result[0] is block
    assert to_content(blocks) == blocks


def test_dicts_that_only_look_like_blocks_are_data():
    for value in (
        {"type": "text"},
        {"type": "text", "text": 3},
        {"type": "image", "data": "AA=="},
        {"type": "resource", "resource": {"uri": "x://a"}},
        {"type": "resource_link", "uri": "x://a"},
        {"type": "video", "data": "AA=="},
    ):
        assert not is_content_block(value)
        assert to_content(value) == [{"type": "text", "text": json.dumps(value, separators=(",", ":"))}]
    assert not is_content_block("text")
    assert not is_content_block(["type", "text"])


def test_mixed_lists_flatten():
    content = to_content(
        [
            "caption",
            Image(PNG),
            {"type": "text", "text": "raw"},
            {"data": 1},
            None,
            [1, 2],
            Weather("Oslo", -3),
            ResourceLink("x://r", "r"),
        ]
    )
    assert content == [
        {"type": "text", "text": "caption"},
        {"type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"},
        {"type": "text", "text": "raw"},
        {"type": "text", "text": '{"data":1}'},
        {"type": "text", "text": "[1,2]"},
        {"type": "text", "text": '{"city":"Oslo","degrees":-3,"mood":"happy"}'},
        {"type": "resource_link", "uri": "x://r", "name": "r"},
    ]
    assert_blocks_valid(content)
    assert to_content((Text("a"), "b")) == [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]


# ---------------------------------------------------------------------------------------------
# resource contents


def test_resource_contents_shapes():
    assert resource_contents("file:///a.txt", "hello", "text/plain") == {
        "uri": "file:///a.txt",
        "mimeType": "text/plain",
        "text": "hello",
    }
    assert resource_contents("file:///a.txt", "") == {"uri": "file:///a.txt", "text": ""}
    assert resource_contents("file:///a.png", PNG, "image/png") == {
        "uri": "file:///a.png",
        "mimeType": "image/png",
        "blob": base64.b64encode(PNG).decode(),
    }
    assert resource_contents("x://b", bytearray(b"\x01")) == {"uri": "x://b", "blob": "AQ=="}
    assert resource_contents("x://b", memoryview(b"\x01")) == {"uri": "x://b", "blob": "AQ=="}
    assert resource_contents("x://d", Weather("a", 1.0), meta={"m": 1}) == {
        "uri": "x://d",
        "mimeType": "application/json",
        "text": '{"city":"a","degrees":1.0,"mood":"happy"}',
        "_meta": {"m": 1},
    }
    assert resource_contents("x://d", [1], "application/x-list")["mimeType"] == "application/x-list"
    for version in VERSIONS:
        contents = [
            resource_contents("x://t", "t"), resource_contents("x://b", b"b"), resource_contents("x://j", {"a": 1})
        ]
        # (2026-07-28 results also need cacheScope/ttlMs: the server adds those; the contents
        # entries are what this module builds.)
        for entry in contents:
            assert_valid(version, "TextResourceContents" if "text" in entry else "BlobResourceContents", entry)
        if version < "2026-07-28":
            assert_valid(version, "ReadResourceResult", {"contents": contents})
    with pytest.raises(ValueError, match="URI"):
        resource_contents("", "x")
    with pytest.raises(TypeError, match="mime_type"):
        resource_contents("x://a", "x", 3)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        resource_contents("x://a", object())


# ---------------------------------------------------------------------------------------------
# tool results


def test_tool_result_with_and_without_structured_content():
    def weather(city: str) -> Weather:
        return Weather(city, 20.0)

    sig = function_schema(weather)
    result = tool_result(Weather("Rome", 30.5), sig)
    assert result == {
        "content": [{"type": "text", "text": '{"city":"Rome","degrees":30.5,"mood":"happy"}'}],
        "structuredContent": {"city": "Rome", "degrees": 30.5, "mood": "happy"},
    }
    # The text block carries the same JSON as the structured content.
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    for version in ("2025-06-18", "2025-11-25"):
        assert_valid(version, "CallToolResult", result)

    def count() -> int:
        return 3

    assert tool_result(3, function_schema(count)) == {
        "content": [{"type": "text", "text": "3"}],
        "structuredContent": {"result": 3},
    }

    def plain() -> str:
        return "x"

    assert tool_result("x", function_schema(plain)) == {"content": [{"type": "text", "text": "x"}]}
    assert tool_result(Image(PNG)) == {"content": [Image(PNG).to_dict()]}
    with pytest.raises(OutputError, match="expected integer, got string"):
        tool_result("three", function_schema(count))


def test_tool_error_result():
    assert tool_error_result("bad input") == {
        "content": [{"type": "text", "text": "bad input"}],
        "isError": True,
    }
    assert tool_error_result(ValueError("boom"))["content"][0]["text"] == "boom"
    assert tool_error_result(KeyError())["content"][0]["text"] == "KeyError"
    for version in VERSIONS[:4]:
        assert_valid(version, "CallToolResult", tool_error_result("x"))


# ---------------------------------------------------------------------------------------------
# downgrades


ALL_BLOCKS = [
    Text("t", annotations={"audience": ["user"], "lastModified": "2025-01-01T00:00:00Z"}, meta={"a": 1}).to_dict(),
    Image(PNG, annotations={"priority": 0.3}).to_dict(),
    Audio(b"\x00" * 10, "audio/wav", annotations={"priority": 1, "lastModified": "2025-01-01T00:00:00Z"}).to_dict(),
    ResourceLink(
        "file:///x.rs",
        "x.rs",
        title="X",
        description="The x file",
        mime_type="text/x-rust",
        icons=[{"src": "https://e.com/i.png"}],
        annotations={"audience": ["assistant"]},
    ).to_dict(),
    EmbeddedResource("x://e", "e", meta={"m": 1}).to_dict(),
    {"type": "resource", "resource": {"uri": "x://b", "blob": "AA==", "_meta": {"k": 1}}},
]


@pytest.mark.parametrize("version", VERSIONS)
def test_downgraded_blocks_fit_every_version(version):
    snapshot = json.loads(json.dumps(ALL_BLOCKS))
    blocks = downgrade_content(ALL_BLOCKS, version)
    assert ALL_BLOCKS == snapshot  # the input is not modified
    assert len(blocks) == len(ALL_BLOCKS)
    assert_blocks_valid(blocks, version)


def test_downgrade_to_2024_11_05():
    blocks = downgrade_content(ALL_BLOCKS, "2024-11-05")
    assert blocks[0] == {"type": "text", "text": "t", "annotations": {"audience": ["user"]}}
    assert blocks[1] is ALL_BLOCKS[1]
    assert blocks[2] == {
        "type": "text",
        "text": "[audio content omitted: audio/wav, 10 bytes]",
        "annotations": {"priority": 1},
    }
    assert blocks[3] == {
        "type": "text",
        "text": "Resource: X <file:///x.rs> (text/x-rust)\nThe x file",
        "annotations": {"audience": ["assistant"]},
    }
    assert blocks[4] == {"type": "resource", "resource": {"uri": "x://e", "text": "e"}}
    assert blocks[5] == {"type": "resource", "resource": {"uri": "x://b", "blob": "AA=="}}


def test_downgrade_to_2025_03_26_keeps_audio():
    blocks = downgrade_content(ALL_BLOCKS, "2025-03-26")
    assert blocks[2] == {
        "type": "audio",
        "data": ALL_BLOCKS[2]["data"],
        "mimeType": "audio/wav",
        "annotations": {"priority": 1},
    }
    assert blocks[3]["type"] == "text"


def test_downgrade_to_2025_06_18_only_drops_icons():
    blocks = downgrade_content(ALL_BLOCKS, "2025-06-18")
    link = dict(ALL_BLOCKS[3])
    del link["icons"]
    assert blocks[3] == link
    for index in (0, 1, 2, 4, 5):
        assert blocks[index] is ALL_BLOCKS[index]


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28", "2099-01-01"])
def test_current_versions_are_unchanged(version):
    blocks = downgrade_content(ALL_BLOCKS, version)
    assert blocks == ALL_BLOCKS
    assert all(a is b for a, b in zip(blocks, ALL_BLOCKS))


def test_resource_link_text_without_optional_fields():
    blocks = downgrade_content([ResourceLink("x://a", "a").to_dict()], "2025-03-26")
    assert blocks == [{"type": "text", "text": "Resource: a <x://a>"}]


def test_audio_size_in_placeholder():
    for size in range(0, 8):
        block = Audio(b"\x01" * size, "audio/wav").to_dict()
        text = downgrade_content([block], "2024-11-05")[0]["text"]
        assert text == f"[audio content omitted: audio/wav, {size} bytes]"


@pytest.mark.parametrize("bad", ["", "2025", "latest", "2025-6-18", None, 20250618])
def test_invalid_protocol_version(bad):
    with pytest.raises(ValueError, match="protocol version"):
        downgrade_content([], bad)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# property tests


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64), st.sampled_from(["image/png", "image/svg+xml"]))
def test_image_data_round_trips(data, mime):
    block = Image(data, mime).to_dict()
    assert base64.b64decode(block["data"], validate=True) == data
    assert block["mimeType"] == mime


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=64) | st.text(max_size=20))
def test_resource_contents_round_trip(value):
    contents = resource_contents("x://v", value)
    if isinstance(value, str):
        assert contents == {"uri": "x://v", "text": value}
    else:
        assert base64.b64decode(contents["blob"], validate=True) == value


json_data = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=5),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(json_data)
def test_data_becomes_one_text_block_with_its_json(value):
    blocks = to_content(value)
    if value is None:
        assert blocks == []
    elif isinstance(value, str):
        assert blocks == [{"type": "text", "text": value}]
    elif is_content_block(value):
        assert blocks == [value]
    else:
        assert len(blocks) == 1 and blocks[0]["type"] == "text"
        assert json.loads(blocks[0]["text"]) == value
