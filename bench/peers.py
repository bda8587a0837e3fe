"""One adapter per JSON library for the codec benchmarks, plus the checks run before timing.

An adapter turns a fixture into two zero-argument callables, built once per benchmark process:

- ``decoder(fixture)()`` parses ``fixture.frame`` and reads the fields a receiver needs as Python
  objects -- ``(id, method, params)`` of a request, ``(method, params)`` of a notification,
  ``(id, result)`` of a response, a list of request triples for the batch;
- ``encoder(fixture)()`` builds the wire bytes from ``fixture.fields`` (the same Python objects for
  every library), starting where a user's code starts: from the id, method and params or result.

Each adapter is what a user of that library would write: it is told the message kind up front
(every library equally; msgspec's typed decoder needs it anyway), reads optional params with
``.get`` like a careful receiver, and returns bytes from encoders (str results are encoded to
UTF-8, as a transport must).  Libraries are imported only when an adapter is used, so a pyperf
worker process loads just the one it times.

Before any timing, ``check_decoder`` / ``check_encoder`` compare each adapter's output with the
json module's result, strictly (an int that comes back as a float, or a bool as an int, fails);
a library that fails is not timed and the report says so.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import json
from typing import Any, Callable, Literal, Union

from bench.fixtures import BATCH, NOTIFICATION, REQUEST, RESPONSE, Fixture, envelope

DECODE = "decode"
ENCODE = "encode"

OK = "ok"                    # checked: output equals the json module's
UNAVAILABLE = "unavailable"  # the library (or mcpfast's compiled codec) cannot be imported
UNSUPPORTED = "unsupported"  # the library has no such operation (e.g. the SDK has no batches)
WRONG = "wrong"              # output differs from json's, or the call raised: not timed


@functools.cache
def distribution_version(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


class Peer:
    """A library the codec benchmarks time; subclasses implement one library each."""

    key: str = ""
    label: str = ""
    module: str = ""          # imported to decide availability
    distribution: str = ""    # PyPI distribution, for the version shown in reports
    encodes: bool = True
    decodes: bool = True

    def unavailable_reason(self) -> str | None:
        try:
            importlib.import_module(self.module)
        except ImportError as exc:
            return f"cannot import {self.module}: {exc}"
        return None

    def unsupported_reason(self, op: str, fixture: Fixture) -> str | None:
        if op == DECODE and not self.decodes:
            return f"{self.label} has no decoder for this"
        if op == ENCODE and not self.encodes:
            return f"{self.label} has no JSON encoder"
        return None

    def version(self) -> str:
        return distribution_version(self.distribution)

    def decoder(self, fixture: Fixture) -> Callable[[], object]:
        raise TypeError(f"{self.label} does not decode")

    def encoder(self, fixture: Fixture) -> Callable[[], bytes]:
        raise TypeError(f"{self.label} does not encode")


def _dict_decoder(kind: str, loads: Callable[[bytes], Any], frame: bytes) -> Callable[[], object]:
    """Decoder for libraries that parse to dicts and lists (json, orjson, msgspec untyped)."""
    if kind == REQUEST:
        def decode():
            m = loads(frame)
            return m["id"], m["method"], m.get("params")
    elif kind == NOTIFICATION:
        def decode():
            m = loads(frame)
            return m["method"], m.get("params")
    elif kind == RESPONSE:
        def decode():
            m = loads(frame)
            return m["id"], m["result"]
    elif kind == BATCH:
        def decode():
            return [(m["id"], m["method"], m.get("params")) for m in loads(frame)]
    else:
        raise ValueError(f"unknown fixture kind {kind!r}")
    return decode


def _dict_encoder(kind: str, dumps: Callable[[Any], bytes], fields: Any) -> Callable[[], bytes]:
    """Encoder for libraries that serialise dicts (the envelope dict is built on every call)."""
    if kind == REQUEST:
        id_, method, params = fields
        def encode():
            return dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params})
    elif kind == NOTIFICATION:
        method, params = fields
        def encode():
            return dumps({"jsonrpc": "2.0", "method": method, "params": params})
    elif kind == RESPONSE:
        id_, result = fields
        def encode():
            return dumps({"jsonrpc": "2.0", "id": id_, "result": result})
    elif kind == BATCH:
        items = fields
        def encode():
            return dumps([{"jsonrpc": "2.0", "id": i, "method": m, "params": p} for i, m, p in items])
    else:
        raise ValueError(f"unknown fixture kind {kind!r}")
    return encode


class Mcpfast(Peer):
    key = "mcpfast"
    label = "mcpfast"
    module = "mcpfast._core.codec"
    distribution = "mcpfast"

    def decoder(self, fixture):
        from mcpfast._core.codec import decode as mf_decode

        frame = fixture.frame
        if fixture.kind == REQUEST:
            def decode():
                m = mf_decode(frame)
                return m.id, m.method, m.params
        elif fixture.kind == NOTIFICATION:
            def decode():
                m = mf_decode(frame)
                return m.method, m.params
        elif fixture.kind == RESPONSE:
            def decode():
                m = mf_decode(frame)
                return m.id, m.result
        elif fixture.kind == BATCH:
            def decode():
                return [(m.id, m.method, m.params) for m in mf_decode(frame)]
        else:
            raise ValueError(f"unknown fixture kind {fixture.kind!r}")
        return decode

    def encoder(self, fixture):
        from mcpfast._core import codec

        fields = fixture.fields
        if fixture.kind == REQUEST:
            encode_request = codec.encode_request
            id_, method, params = fields
            def encode():
                return encode_request(id_, method, params)
        elif fixture.kind == NOTIFICATION:
            encode_notification = codec.encode_notification
            method, params = fields
            def encode():
                return encode_notification(method, params)
        elif fixture.kind == RESPONSE:
            encode_response = codec.encode_response
            id_, result = fields
            def encode():
                return encode_response(id_, result)
        elif fixture.kind == BATCH:
            encode_batch, Request = codec.encode_batch, codec.Request
            def encode():
                return encode_batch([Request(i, m, p) for i, m, p in fields])
        else:
            raise ValueError(f"unknown fixture kind {fixture.kind!r}")
        return encode


class McpfastEnvelope(Peer):
    """mcpfast decode reading only the envelope (id, method): the lazy payload is never built."""

    key = "mcpfast-envelope"
    label = "mcpfast envelope only"
    module = "mcpfast._core.codec"
    distribution = "mcpfast"
    encodes = False

    def unsupported_reason(self, op, fixture):
        if op == ENCODE:
            return "decode-only row"
        return None

    def decoder(self, fixture):
        from mcpfast._core.codec import decode as mf_decode

        frame = fixture.frame
        if fixture.kind == REQUEST:
            def decode():
                m = mf_decode(frame)
                return m.id, m.method
        elif fixture.kind == NOTIFICATION:
            def decode():
                return (mf_decode(frame).method,)
        elif fixture.kind == RESPONSE:
            def decode():
                return (mf_decode(frame).id,)
        elif fixture.kind == BATCH:
            def decode():
                return [(m.id, m.method) for m in mf_decode(frame)]
        else:
            raise ValueError(f"unknown fixture kind {fixture.kind!r}")
        return decode


class StdlibJson(Peer):
    key = "json"
    label = "json (stdlib)"
    module = "json"
    distribution = ""

    def version(self):
        import platform

        return f"Python {platform.python_version()}"

    def decoder(self, fixture):
        return _dict_decoder(fixture.kind, json.loads, fixture.frame)

    def encoder(self, fixture):
        # The envelope dict goes through json.dumps with compact separators and is encoded to UTF-8,
        # as a transport writing bytes must.
        dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode

        def dumps_utf8(value):
            return dumps(value).encode()

        return _dict_encoder(fixture.kind, dumps_utf8, fixture.fields)


class Orjson(Peer):
    key = "orjson"
    label = "orjson"
    module = "orjson"
    distribution = "orjson"

    def decoder(self, fixture):
        import orjson

        return _dict_decoder(fixture.kind, orjson.loads, fixture.frame)

    def encoder(self, fixture):
        import orjson

        return _dict_encoder(fixture.kind, orjson.dumps, fixture.fields)


class Msgspec(Peer):
    key = "msgspec"
    label = "msgspec (untyped)"
    module = "msgspec"
    distribution = "msgspec"

    def decoder(self, fixture):
        import msgspec

        return _dict_decoder(fixture.kind, msgspec.json.Decoder().decode, fixture.frame)

    def encoder(self, fixture):
        import msgspec

        return _dict_encoder(fixture.kind, msgspec.json.Encoder().encode, fixture.fields)


@functools.cache
def msgspec_structs():
    """The msgspec Structs of the typed rows: one per JSON-RPC message kind, payload Any."""
    import msgspec

    class Request(msgspec.Struct):
        jsonrpc: Literal["2.0"]
        id: Union[int, str]
        method: str
        params: Any = None

    class Notification(msgspec.Struct):
        jsonrpc: Literal["2.0"]
        method: str
        params: Any = None

    class Response(msgspec.Struct):
        jsonrpc: Literal["2.0"]
        id: Union[int, str]
        result: Any

    return Request, Notification, Response


class MsgspecTyped(Peer):
    """msgspec decoding straight into the Struct of the fixture's kind (it is told the kind)."""

    key = "msgspec-typed"
    label = "msgspec Struct"
    module = "msgspec"
    distribution = "msgspec"

    def decoder(self, fixture):
        import msgspec

        Request, Notification, Response = msgspec_structs()
        frame = fixture.frame
        if fixture.kind == REQUEST:
            loads = msgspec.json.Decoder(Request).decode
            def decode():
                m = loads(frame)
                return m.id, m.method, m.params
        elif fixture.kind == NOTIFICATION:
            loads = msgspec.json.Decoder(Notification).decode
            def decode():
                m = loads(frame)
                return m.method, m.params
        elif fixture.kind == RESPONSE:
            loads = msgspec.json.Decoder(Response).decode
            def decode():
                m = loads(frame)
                return m.id, m.result
        elif fixture.kind == BATCH:
            loads = msgspec.json.Decoder(list[Request]).decode
            def decode():
                return [(m.id, m.method, m.params) for m in loads(frame)]
        else:
            raise ValueError(f"unknown fixture kind {fixture.kind!r}")
        return decode

    def encoder(self, fixture):
        import msgspec

        Request, Notification, Response = msgspec_structs()
        dumps = msgspec.json.Encoder().encode
        fields = fixture.fields
        if fixture.kind == REQUEST:
            id_, method, params = fields
            def encode():
                return dumps(Request("2.0", id_, method, params))
        elif fixture.kind == NOTIFICATION:
            method, params = fields
            def encode():
                return dumps(Notification("2.0", method, params))
        elif fixture.kind == RESPONSE:
            id_, result = fields
            def encode():
                return dumps(Response("2.0", id_, result))
        elif fixture.kind == BATCH:
            def encode():
                return dumps([Request("2.0", i, m, p) for i, m, p in fields])
        else:
            raise ValueError(f"unknown fixture kind {fixture.kind!r}")
        return encode


class Pysimdjson(Peer):
    """pysimdjson's reusable Parser: lazy proxies, the payload converted with as_dict()."""

    key = "pysimdjson"
    label = "pysimdjson"
    module = "simdjson"
    distribution = "pysimdjson"
    encodes = False

    def unsupported_reason(self, op, fixture):
        if op == ENCODE:
            return "pysimdjson only parses (its dumps is the stdlib json encoder)"
        return None

    def decoder(self, fixture):
        import simdjson

        parse = simdjson.Parser().parse
        frame = fixture.frame
        # Every returned value is a plain Python object, so no proxy outlives the call and the
        # parser can be reused by the next one.
        if fixture.kind == REQUEST:
            def decode():
                m = parse(frame)
                params = m.get("params")
                return m["id"], m["method"], None if params is None else params.as_dict()
        elif fixture.kind == NOTIFICATION:
            def decode():
                m = parse(frame)
                params = m.get("params")
                return m["method"], None if params is None else params.as_dict()
        elif fixture.kind == RESPONSE:
            def decode():
                m = parse(frame)
                return m["id"], m["result"].as_dict()
        elif fixture.kind == BATCH:
            def decode():
                out = []
                for m in parse(frame):
                    params = m.get("params")
                    out.append((m["id"], m["method"], None if params is None else params.as_dict()))
                return out
        else:
            raise ValueError(f"unknown fixture kind {fixture.kind!r}")
        return decode


class SimdjsonParse(Pysimdjson):
    """The physical floor of a decode: simdjson's own DOM parse of the same bytes (the parser
    mcpfast's decoder runs first), building no Python object but the document's size.
    pysimdjson's parser, without its conversions; decode rows only; its ratio is mcpfast's
    distance to the floor."""

    key = "simdjson-parse"
    label = "simdjson parse only (floor)"

    def decoder(self, fixture):
        import simdjson

        parse = simdjson.Parser().parse
        frame = fixture.frame

        def decode():
            # len() of the top-level object or array: the parse happened, and the proxy
            # is gone before the next parse reuses the parser.
            return len(parse(frame))
        return decode


class OfficialSdk(Peer):
    """The official `mcp` SDK's pydantic models, exactly as its transports use them.

    Its stdio and HTTP transports decode with ``mcp_types.jsonrpc_message_adapter.validate_json(
    line, by_name=False)`` (``mcp.types`` re-exports the same object) and encode with
    ``model_dump_json(by_alias=True, exclude_unset=True)`` followed by ``.encode()``.  Encoding
    starts from the id and params, so building the model is part of the cost, as in the SDK.
    """

    key = "mcp-sdk"
    label = "mcp SDK (pydantic)"
    module = "mcp_types"
    distribution = "mcp"

    def unsupported_reason(self, op, fixture):
        if fixture.kind == BATCH:
            return "the official SDK has no JSON-RPC batch support"
        return None

    def decoder(self, fixture):
        from mcp_types import jsonrpc_message_adapter

        validate_json = jsonrpc_message_adapter.validate_json
        frame = fixture.frame
        if fixture.kind == REQUEST:
            def decode():
                m = validate_json(frame, by_name=False)
                return m.id, m.method, m.params
        elif fixture.kind == NOTIFICATION:
            def decode():
                m = validate_json(frame, by_name=False)
                return m.method, m.params
        elif fixture.kind == RESPONSE:
            def decode():
                m = validate_json(frame, by_name=False)
                return m.id, m.result
        else:
            raise ValueError(f"the official SDK cannot decode a {fixture.kind}")
        return decode

    def encoder(self, fixture):
        from mcp_types import JSONRPCNotification, JSONRPCRequest, JSONRPCResponse

        fields = fixture.fields
        if fixture.kind == REQUEST:
            id_, method, params = fields
            def encode():
                message = JSONRPCRequest(jsonrpc="2.0", id=id_, method=method, params=params)
                return message.model_dump_json(by_alias=True, exclude_unset=True).encode()
        elif fixture.kind == NOTIFICATION:
            method, params = fields
            def encode():
                message = JSONRPCNotification(jsonrpc="2.0", method=method, params=params)
                return message.model_dump_json(by_alias=True, exclude_unset=True).encode()
        elif fixture.kind == RESPONSE:
            id_, result = fields
            def encode():
                message = JSONRPCResponse(jsonrpc="2.0", id=id_, result=result)
                return message.model_dump_json(by_alias=True, exclude_unset=True).encode()
        else:
            raise ValueError(f"the official SDK cannot encode a {fixture.kind}")
        return encode


PEERS: tuple[Peer, ...] = (
    Mcpfast(),
    McpfastEnvelope(),
    StdlibJson(),
    Orjson(),
    Msgspec(),
    MsgspecTyped(),
    Pysimdjson(),
    SimdjsonParse(),
    OfficialSdk(),
)
BY_KEY: dict[str, Peer] = {peer.key: peer for peer in PEERS}
REFERENCE_PEER = BY_KEY["json"]


def strict_equal(a: object, b: object) -> bool:
    """Equality that also requires equal types at every level (1 != 1.0 != True here)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(strict_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b))
    return a == b


def expected_decode(peer: Peer, fixture: Fixture) -> object:
    """What ``peer``'s decoder must return: the json module's fields (the envelope row: no payload)."""
    fields = REFERENCE_PEER.decoder(fixture)()
    if isinstance(peer, SimdjsonParse):
        return len(json.loads(fixture.frame))
    if isinstance(peer, McpfastEnvelope):
        if fixture.kind == BATCH:
            return [item[:2] for item in fields]
        return fields[:-1]
    return fields


def _describe_difference(got: object, want: object) -> str:
    text = f"got {got!r:.160} expected {want!r:.160}"
    return text


def check_decoder(peer: Peer, fixture: Fixture) -> tuple[str, str]:
    """(status, detail) of ``peer`` decoding ``fixture``; status OK means it may be timed."""
    reason = peer.unavailable_reason()
    if reason:
        return UNAVAILABLE, reason
    reason = peer.unsupported_reason(DECODE, fixture)
    if reason:
        return UNSUPPORTED, reason
    want = expected_decode(peer, fixture)
    try:
        decode = peer.decoder(fixture)
        first = decode()
        second = decode()  # a reused parser/buffer must give the same answer again
    except Exception as exc:  # any failure means the library decodes this wrongly
        return WRONG, f"raised {type(exc).__name__}: {exc}"
    for got in (first, second):
        if not strict_equal(got, want):
            return WRONG, _describe_difference(got, want)
    return OK, ""


def check_encoder(peer: Peer, fixture: Fixture) -> tuple[str, str]:
    """(status, detail) of ``peer`` encoding ``fixture``: the bytes must parse back to the envelope."""
    reason = peer.unavailable_reason()
    if reason:
        return UNAVAILABLE, reason
    reason = peer.unsupported_reason(ENCODE, fixture)
    if reason:
        return UNSUPPORTED, reason
    want = envelope(fixture.kind, fixture.fields)
    try:
        encode = peer.encoder(fixture)
        out = encode()
    except Exception as exc:  # any failure means the library encodes this wrongly
        return WRONG, f"raised {type(exc).__name__}: {exc}"
    if not isinstance(out, bytes):
        return WRONG, f"returned {type(out).__name__}, not bytes"
    try:
        got = json.loads(out)
    except ValueError as exc:
        return WRONG, f"output is not JSON ({exc}): {out[:120]!r}"
    if not strict_equal(got, want):
        return WRONG, _describe_difference(got, want)
    return OK, ""


def check(peer: Peer, op: str, fixture: Fixture) -> tuple[str, str]:
    return check_decoder(peer, fixture) if op == DECODE else check_encoder(peer, fixture)
