"""What a tool (or prompt, or resource) returns -> MCP content blocks and resource contents.

`to_content(value)` maps a return value to the ``content`` list of a CallToolResult:

- ``None`` -> ``[]``; a ``str`` -> one text block.
- `Text`, `Image`, `Audio`, `EmbeddedResource`, `ResourceLink` -> their block (exact spec
  shapes, ``annotations`` and ``_meta`` when given).
- a dict that already is a content block (a known ``type`` and that type's required fields)
  passes through unchanged.
- a list or tuple containing at least one content object or content block is flattened: every
  element is mapped on its own (strings become text blocks, other data one JSON text block
  each, ``None`` is dropped).
- any other data (dicts, lists, numbers, booleans, dataclasses, Enums, ...) -> one text block
  holding its compact JSON (`mcpfast.server.schema.to_jsonable` rules). ``bytes`` are refused
  (TypeError): wrap them in `Image`, `Audio` or `EmbeddedResource`, which carry a MIME type.

`tool_result` builds the whole CallToolResult, adding ``structuredContent`` from the tool's
`ToolSignature` when it has an output schema. `resource_contents` builds one entry of a
resources/read result. `downgrade_content` rewrites blocks for clients that negotiated an older
protocol version (see its docstring for the mapping).
"""

from __future__ import annotations

import abc
import base64
import binascii
import dataclasses
import datetime
import json
import math
import mimetypes
import os
import re
from typing import Any, Iterable, Mapping, Sequence

from .schema import ToolSignature, UnstructuredOutput, serialize_output, to_jsonable

__all__ = [
    "Annotations",
    "Audio",
    "ContentItem",
    "EmbeddedResource",
    "Image",
    "ResourceLink",
    "Text",
    "downgrade_content",
    "resource_contents",
    "to_content",
    "tool_error_result",
    "tool_result",
]

_ROLES = frozenset({"user", "assistant"})


def _dumps(value: Any) -> str:
    """Compact JSON text (no spaces, UTF-8 kept, NaN refused)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _as_bytes(data: Any) -> bytes | None:
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    return None


@dataclasses.dataclass(frozen=True)
class Annotations:
    """Hints for the client: who the content is for, how important it is, when it changed.

    ``audience``: roles among "user" and "assistant"; ``priority``: 0 (optional) to 1
    (required); ``last_modified``: ISO 8601 string or a datetime (written as ISO 8601).
    """

    audience: tuple[str, ...] | None = None
    priority: float | None = None
    last_modified: str | datetime.datetime | None = None

    def __post_init__(self) -> None:
        if self.audience is not None:
            if isinstance(self.audience, str) or not isinstance(self.audience, Iterable):
                raise ValueError("audience must be a list of roles ('user', 'assistant')")
            audience = tuple(self.audience)
            for role in audience:
                if role not in _ROLES:
                    raise ValueError(f"audience role must be 'user' or 'assistant', got {role!r}")
            object.__setattr__(self, "audience", audience)
        if self.priority is not None:
            if (
                not isinstance(self.priority, (int, float))
                or isinstance(self.priority, bool)
                or not math.isfinite(self.priority)
                or not 0 <= self.priority <= 1
            ):
                raise ValueError(f"priority must be a number from 0 to 1, got {self.priority!r}")
        if isinstance(self.last_modified, datetime.datetime):
            object.__setattr__(self, "last_modified", self.last_modified.isoformat())
        elif self.last_modified is not None and not isinstance(self.last_modified, str):
            raise ValueError(
                f"last_modified must be an ISO 8601 string or datetime, got {self.last_modified!r}"
            )

    @classmethod
    def from_value(cls, value: Annotations | Mapping[str, Any]) -> Annotations:
        """Accept an Annotations or its wire form ``{"audience", "priority", "lastModified"}``."""
        if isinstance(value, Annotations):
            return value
        if not isinstance(value, Mapping):
            raise TypeError(f"annotations must be Annotations or a dict, got {type(value).__name__}")
        unknown = set(value) - {"audience", "priority", "lastModified"}
        if unknown:
            raise ValueError(f"unknown annotation keys: {', '.join(sorted(map(str, unknown)))}")
        return cls(
            audience=value.get("audience"),
            priority=value.get("priority"),
            last_modified=value.get("lastModified"),
        )

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.audience is not None:
            out["audience"] = list(self.audience)
        if self.priority is not None:
            out["priority"] = self.priority
        if self.last_modified is not None:
            out["lastModified"] = self.last_modified
        return out


def _check_meta(meta: Any) -> dict[str, Any] | None:
    if meta is None:
        return None
    if not isinstance(meta, Mapping):
        raise TypeError(f"meta must be a dict, got {type(meta).__name__}")
    return dict(meta)


def _check_annotations(value: Any) -> Annotations | None:
    return None if value is None else Annotations.from_value(value)


def _finish(block: dict[str, Any], annotations: Annotations | None, meta: dict[str, Any] | None) -> dict[str, Any]:
    if annotations is not None:
        wire = annotations.to_dict()
        if wire:
            block["annotations"] = wire
    if meta is not None:
        block["_meta"] = meta
    return block


class ContentItem(UnstructuredOutput, abc.ABC):
    """Base of the content classes a tool may return; `to_dict` gives the wire block.

    (An `UnstructuredOutput`: a tool whose return annotation mentions one gets no output
    schema.)"""

    __slots__ = ()

    @abc.abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """The content block exactly as the specification shapes it."""


@dataclasses.dataclass(frozen=True)
class Text(ContentItem):
    """A text block, optionally annotated."""

    text: str
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(f"Text needs a str, got {type(self.text).__name__}")
        object.__setattr__(self, "annotations", _check_annotations(self.annotations))
        object.__setattr__(self, "meta", _check_meta(self.meta))

    def to_dict(self) -> dict[str, Any]:
        return _finish({"type": "text", "text": self.text}, self.annotations, self.meta)


# Magic numbers of the common formats, used when no MIME type is given and no file name tells.
def _sniff_image(data: bytes) -> str | None:
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _sniff_audio(data: bytes) -> str | None:
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return "audio/wav"
    if data.startswith(b"ID3") or data[:2] in (b"\xff\xfb", b"\xff\xf3", b"\xff\xf2"):
        return "audio/mpeg"
    if data.startswith(b"OggS"):
        return "audio/ogg"
    if data.startswith(b"fLaC"):
        return "audio/flac"
    if data[4:8] == b"ftyp":
        return "audio/mp4"
    return None


class _Binary(ContentItem):
    """Shared behaviour of Image and Audio: raw bytes or a file path, plus a MIME type."""

    __slots__ = ("data", "mime_type", "annotations", "meta")
    _block_type = ""
    _major = ""

    data: bytes
    mime_type: str
    annotations: Annotations | None
    meta: dict[str, Any] | None

    def __init__(
        self,
        data: bytes | bytearray | memoryview | str | os.PathLike[str],
        mime_type: str | None = None,
        *,
        annotations: Annotations | Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        raw = _as_bytes(data)
        if raw is None:
            if not isinstance(data, (str, os.PathLike)):
                raise TypeError(
                    f"{type(self).__name__} needs bytes or a file path, got {type(data).__name__}"
                )
            path = os.fspath(data)
            with open(path, "rb") as handle:
                raw = handle.read()
            if mime_type is None:
                guessed, _ = mimetypes.guess_type(path)
                if guessed is not None and guessed.startswith(self._major + "/"):
                    mime_type = guessed
        if mime_type is None:
            mime_type = self._sniff(raw)
        if mime_type is None:
            raise ValueError(
                f"{type(self).__name__}: cannot tell the MIME type of the data, pass mime_type="
            )
        if not isinstance(mime_type, str) or "/" not in mime_type:
            raise ValueError(f"{type(self).__name__}: invalid MIME type {mime_type!r}")
        object.__setattr__(self, "data", raw)
        object.__setattr__(self, "mime_type", mime_type)
        object.__setattr__(self, "annotations", _check_annotations(annotations))
        object.__setattr__(self, "meta", _check_meta(meta))

    @classmethod
    def from_base64(
        cls,
        data: str,
        mime_type: str,
        *,
        annotations: Annotations | Mapping[str, Any] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> Any:
        """Build from data that is already base64 encoded (checked)."""
        try:
            raw = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ValueError(f"{cls.__name__}: invalid base64 data: {exc}") from None
        return cls(raw, mime_type, annotations=annotations, meta=meta)

    @staticmethod
    def _sniff(data: bytes) -> str | None:
        return None

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return (self.data, self.mime_type, self.annotations, self.meta) == (
            other.data,
            other.mime_type,
            other.annotations,
            other.meta,
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(<{len(self.data)} bytes>, mime_type={self.mime_type!r})"

    def to_dict(self) -> dict[str, Any]:
        return _finish(
            {"type": self._block_type, "data": _b64(self.data), "mimeType": self.mime_type},
            self.annotations,
            self.meta,
        )


class Image(_Binary):
    """An image block: ``Image(b"...", "image/png")`` or ``Image("chart.png")``.

    The MIME type comes from the argument, else the file name, else the PNG/JPEG/GIF/WebP
    signature of the data; ValueError when none tells.
    """

    __slots__ = ()
    _block_type = "image"
    _major = "image"

    @staticmethod
    def _sniff(data: bytes) -> str | None:
        return _sniff_image(data)


class Audio(_Binary):
    """An audio block (protocol 2025-03-26 and later): ``Audio(b"...", "audio/wav")`` or
    ``Audio("clip.mp3")``. MIME type as for `Image` (WAV/MP3/OGG/FLAC/MP4 signatures)."""

    __slots__ = ()
    _block_type = "audio"
    _major = "audio"

    @staticmethod
    def _sniff(data: bytes) -> str | None:
        return _sniff_audio(data)


def _check_uri(uri: Any, owner: str) -> None:
    if not isinstance(uri, str) or not uri:
        raise ValueError(f"{owner} needs a non-empty URI string, got {uri!r}")


def resource_contents(
    uri: str,
    value: Any,
    mime_type: str | None = None,
    *,
    meta: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """One entry of a resources/read ``contents`` list (also the ``resource`` of an embedded
    resource): ``str`` -> ``{"uri", "mimeType"?, "text"}``, bytes -> ``{"uri", "mimeType"?,
    "blob": base64}``, any other data -> its compact JSON as text with ``mimeType``
    ``application/json`` unless another is given."""
    _check_uri(uri, "resource contents")
    if mime_type is not None and not isinstance(mime_type, str):
        raise TypeError(f"mime_type must be a str, got {type(mime_type).__name__}")
    contents: dict[str, Any] = {"uri": uri}
    raw = _as_bytes(value)
    if isinstance(value, str):
        if mime_type is not None:
            contents["mimeType"] = mime_type
        contents["text"] = value
    elif raw is not None:
        if mime_type is not None:
            contents["mimeType"] = mime_type
        contents["blob"] = _b64(raw)
    else:
        contents["mimeType"] = mime_type or "application/json"
        contents["text"] = _dumps(to_jsonable(value))
    meta_dict = _check_meta(meta)
    if meta_dict is not None:
        contents["_meta"] = meta_dict
    return contents


@dataclasses.dataclass(frozen=True)
class EmbeddedResource(ContentItem):
    """A resource embedded in a result: ``EmbeddedResource("file:///a.txt", "text")`` for
    text contents, bytes for a base64 blob, other data as JSON text (see
    `resource_contents`)."""

    uri: str
    content: Any
    mime_type: str | None = None
    annotations: Annotations | None = None
    meta: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        _check_uri(self.uri, "EmbeddedResource")
        raw = _as_bytes(self.content)
        if raw is not None:
            object.__setattr__(self, "content", raw)
        object.__setattr__(self, "annotations", _check_annotations(self.annotations))
        object.__setattr__(self, "meta", _check_meta(self.meta))
        # Fail now, inside the tool, rather than while the server encodes the result.
        resource_contents(self.uri, self.content, self.mime_type)

    def to_dict(self) -> dict[str, Any]:
        return _finish(
            {"type": "resource", "resource": resource_contents(self.uri, self.content, self.mime_type)},
            self.annotations,
            self.meta,
        )


@dataclasses.dataclass(frozen=True)
class ResourceLink(ContentItem):
    """A link to a resource the client may read (protocol 2025-06-18 and later)."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: Annotations | None = None
    icons: tuple[dict[str, Any], ...] | None = None
    meta: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        _check_uri(self.uri, "ResourceLink")
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"ResourceLink needs a non-empty name, got {self.name!r}")
        for attr in ("title", "description", "mime_type"):
            value = getattr(self, attr)
            if value is not None and not isinstance(value, str):
                raise TypeError(f"ResourceLink.{attr} must be a str, got {type(value).__name__}")
        if self.size is not None and (
            not isinstance(self.size, int) or isinstance(self.size, bool) or self.size < 0
        ):
            raise ValueError(f"ResourceLink.size must be an int >= 0, got {self.size!r}")
        if self.icons is not None:
            icons = tuple(dict(icon) for icon in self.icons)
            for icon in icons:
                if not isinstance(icon.get("src"), str):
                    raise ValueError("every icon needs a 'src' URI string")
            object.__setattr__(self, "icons", icons)
        object.__setattr__(self, "annotations", _check_annotations(self.annotations))
        object.__setattr__(self, "meta", _check_meta(self.meta))

    def to_dict(self) -> dict[str, Any]:
        block: dict[str, Any] = {"type": "resource_link", "uri": self.uri, "name": self.name}
        if self.title is not None:
            block["title"] = self.title
        if self.description is not None:
            block["description"] = self.description
        if self.mime_type is not None:
            block["mimeType"] = self.mime_type
        if self.size is not None:
            block["size"] = self.size
        if self.icons is not None:
            block["icons"] = [dict(icon) for icon in self.icons]
        return _finish(block, self.annotations, self.meta)


def _is_str(value: Any) -> bool:
    return isinstance(value, str)


def _is_resource(value: Any) -> bool:
    return (
        isinstance(value, Mapping)
        and _is_str(value.get("uri"))
        and (_is_str(value.get("text")) or _is_str(value.get("blob")))
    )


# type -> check of the fields that type requires.
_BLOCK_SHAPES = {
    "text": lambda d: _is_str(d.get("text")),
    "image": lambda d: _is_str(d.get("data")) and _is_str(d.get("mimeType")),
    "audio": lambda d: _is_str(d.get("data")) and _is_str(d.get("mimeType")),
    "resource": lambda d: _is_resource(d.get("resource")),
    "resource_link": lambda d: _is_str(d.get("uri")) and _is_str(d.get("name")),
}


def is_content_block(value: Any) -> bool:
    """True for a dict shaped like an MCP content block (known type, required fields)."""
    if not isinstance(value, dict):
        return False
    check = _BLOCK_SHAPES.get(value.get("type"))  # type: ignore[arg-type]
    return check is not None and check(value)


def _is_content_like(value: Any) -> bool:
    return isinstance(value, ContentItem) or is_content_block(value)


def to_content(value: Any) -> list[dict[str, Any]]:
    """Map a tool's return value to a list of content blocks (rules in the module docstring).

    Raises TypeError for values that have no JSON form (bytes included) and ValueError for
    NaN/infinite floats.
    """
    if value is None:
        return []
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    if isinstance(value, ContentItem):
        return [value.to_dict()]
    if isinstance(value, dict) and is_content_block(value):
        return [value]
    if isinstance(value, (list, tuple)) and any(_is_content_like(v) for v in value):
        blocks: list[dict[str, Any]] = []
        for element in value:
            blocks.extend(to_content(element))
        return blocks
    if isinstance(value, (bytes, bytearray, memoryview)):
        raise TypeError(
            "a tool cannot return raw bytes: wrap them in Image, Audio or EmbeddedResource"
        )
    return [{"type": "text", "text": _dumps(to_jsonable(value))}]


def tool_result(value: Any, signature: ToolSignature | None = None) -> dict[str, Any]:
    """The CallToolResult for a tool's return value: ``content`` from `to_content`, plus
    ``structuredContent`` when ``signature`` has an output schema (raises
    `mcpfast.server.schema.OutputError` when the value does not fit it)."""
    result: dict[str, Any] = {"content": to_content(value)}
    if signature is not None and signature.output_schema is not None:
        result["structuredContent"] = serialize_output(signature, value)
    return result


def tool_error_result(error: str | BaseException) -> dict[str, Any]:
    """A CallToolResult reporting a failed call (``isError: true``) with the message as text."""
    message = error if isinstance(error, str) else (str(error) or type(error).__name__)
    return {"content": [{"type": "text", "text": message}], "isError": True}


# --------------------------------------------------------------------------------------------
# Older protocol versions

_VERSION_FORMAT = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_AUDIO_SINCE = "2025-03-26"
_RESOURCE_LINK_SINCE = "2025-06-18"
_META_SINCE = "2025-06-18"  # _meta on blocks and resource contents, annotations.lastModified
_ICONS_SINCE = "2025-11-25"  # ResourceLink.icons


def _decoded_size(data: str) -> int:
    padding = data[-2:].count("=") if data else 0
    return max(len(data) * 3 // 4 - padding, 0)


def _old_annotations(block: Mapping[str, Any]) -> dict[str, Any] | None:
    annotations = block.get("annotations")
    if not isinstance(annotations, Mapping):
        return None
    kept = {k: v for k, v in annotations.items() if k != "lastModified"}
    return kept or None


def _link_text(block: Mapping[str, Any]) -> str:
    label = block.get("title") or block.get("name")
    text = f"Resource: {label} <{block.get('uri')}>"
    if block.get("mimeType"):
        text += f" ({block['mimeType']})"
    if block.get("description"):
        text += f"\n{block['description']}"
    return text


def downgrade_content(items: Sequence[Mapping[str, Any]], protocol_version: str) -> list[dict[str, Any]]:
    """Rewrite content blocks for a client that negotiated ``protocol_version``.

    - before 2025-03-26 (no audio): an audio block becomes a text block
      ``"[audio content omitted: <mimeType>, <n> bytes]"``.
    - before 2025-06-18 (no resource_link, no ``_meta`` on content, no
      ``annotations.lastModified``): a resource_link becomes a text block
      ``"Resource: <title or name> <<uri>> (<mimeType>)"`` followed by a line with its
      description when it has one; ``_meta`` is dropped from blocks and embedded resource
      contents and ``lastModified`` from annotations (an emptied ``annotations`` is dropped).
    - before 2025-11-25: ``icons`` is dropped from resource_link blocks.
    Annotations (audience, priority) carry over to the replacement text blocks. Blocks that
    need no change are returned as they are (not copied); the input list is not modified.
    Raises ValueError when ``protocol_version`` is not a YYYY-MM-DD version string.
    """
    if not isinstance(protocol_version, str) or not _VERSION_FORMAT.match(protocol_version):
        raise ValueError(f"invalid protocol version {protocol_version!r}")
    if protocol_version >= _ICONS_SINCE:
        return list(items)  # type: ignore[arg-type]
    old_meta = protocol_version < _META_SINCE
    out: list[dict[str, Any]] = []
    for block in items:
        kind = block.get("type")
        new: dict[str, Any] | None = None
        if kind == "audio" and protocol_version < _AUDIO_SINCE:
            size = _decoded_size(block.get("data") or "")
            new = {
                "type": "text",
                "text": f"[audio content omitted: {block.get('mimeType')}, {size} bytes]",
            }
            annotations = _old_annotations(block)
            if annotations:
                new["annotations"] = annotations
        elif kind == "resource_link" and protocol_version < _RESOURCE_LINK_SINCE:
            new = {"type": "text", "text": _link_text(block)}
            annotations = _old_annotations(block)
            if annotations:
                new["annotations"] = annotations
        elif kind == "resource_link" and "icons" in block:
            new = {k: v for k, v in block.items() if k != "icons"}
        elif old_meta and (
            "_meta" in block
            or (isinstance(block.get("annotations"), Mapping) and "lastModified" in block["annotations"])
            or (kind == "resource" and isinstance(block.get("resource"), Mapping) and "_meta" in block["resource"])
        ):
            new = {k: v for k, v in block.items() if k not in ("_meta", "annotations")}
            annotations = _old_annotations(block)
            if annotations:
                new["annotations"] = annotations
            if kind == "resource" and isinstance(block.get("resource"), Mapping):
                new["resource"] = {k: v for k, v in block["resource"].items() if k != "_meta"}
        out.append(new if new is not None else block)  # type: ignore[arg-type]
    return out
