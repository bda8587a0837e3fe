"""Type -> JSON Schema: `SchemaBuilder` compiles annotations into nodes (schema, converter,
dumper), collecting named object types (dataclasses, TypedDicts) under ``$defs``."""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import json
import re
import typing
from typing import Any, Callable, Mapping

from .annotations import (
    ANNOTATED_ORIGINS,
    DICT_ORIGINS,
    LIST_ORIGINS,
    LITERAL_ORIGINS,
    REQUIREDNESS_WRAPPERS,
    SET_ORIGINS,
    UNION_ORIGINS,
    split_annotated,
    strip_requiredness,
    type_name,
    typeddict_key_required,
)
from .constraints import constraint_check, constraint_keywords
from .docstrings import class_doc
from .errors import Mismatch, check_array_like, kind_of, unknown_key_error, wrong_type
from .fields import Field
from .jsonable import to_jsonable
from .nodes import (
    ANY_NODE,
    BOOL_NODE,
    FLOAT_NODE,
    INT_NODE,
    NULL_NODE,
    STR_NODE,
    Node,
    choice_node,
    format_choices,
    literal_key,
    map_items,
    map_positions,
)
from .sentinels import FACTORY, MISSING, OMIT, REQUIRED


class SchemaBuilder:
    """Compiles annotations into nodes, collecting named object schemas in ``defs``."""

    def __init__(self, globalns: dict[str, Any] | None) -> None:
        self.globalns = globalns or {}
        self.defs: dict[str, Any] = {}
        self.named: dict[Any, Node] = {}
        self.def_owner: dict[str, Any] = {}

    # -- entry point --------------------------------------------------------------------

    def annotated(self, tp: Any, where: str) -> tuple[Node, Field | None]:
        """Node for a possibly Annotated type with its metadata applied, plus the Field."""
        base, description, fld = split_annotated(tp)
        node = self.node(base, where)
        return self.apply_meta(node, description, fld, where), fld

    def apply_meta(
        self, node: Node, description: str | None, fld: Field | None, where: str
    ) -> Node:
        if description is None and fld is None:
            return node
        schema = dict(node.schema)
        if description:
            schema["description"] = description
        if fld is None:
            return Node(
                schema, node.convert, node.dump, node.kinds, node.label, node.hashable, node.exact
            )
        if fld.title is not None:
            schema["title"] = fld.title
        if fld.examples is not None:
            schema["examples"] = [to_jsonable(e) for e in fld.examples]
        schema.update(constraint_keywords(fld, node.kinds, where))
        check = constraint_check(fld)
        if check is None:
            return Node(
                schema, node.convert, node.dump, node.kinds, node.label, node.hashable, node.exact
            )
        inner_convert, inner_dump = node.convert, node.dump

        def convert(value: Any) -> Any:
            result = inner_convert(value)
            check(value)
            return result

        def dump(value: Any) -> Any:
            result = inner_dump(value)
            check(result)
            return result

        return Node(schema, convert, dump, node.kinds, node.label, node.hashable)

    def node(self, tp: Any, where: str) -> Node:
        if isinstance(tp, str):
            tp = typing.ForwardRef(tp)
        if isinstance(tp, typing.ForwardRef):
            try:
                tp = eval(tp.__forward_arg__, self.globalns)  # noqa: S307 - annotation text
            except Exception as exc:
                raise TypeError(
                    f"cannot resolve the annotation {tp.__forward_arg__!r} of {where}: {exc}"
                ) from None
        if tp is Any or tp is object:
            return ANY_NODE
        if tp is None or tp is type(None):
            return NULL_NODE
        if tp is str:
            return STR_NODE
        if tp is bool:
            return BOOL_NODE
        if tp is int:
            return INT_NODE
        if tp is float:
            return FLOAT_NODE
        origin = typing.get_origin(tp)
        args = typing.get_args(tp)
        if origin in ANNOTATED_ORIGINS:
            return self.annotated(tp, where)[0]
        if origin in UNION_ORIGINS:
            return self.union_node(args, where)
        if origin in LITERAL_ORIGINS:
            return self.literal_node(args, where)
        if origin in REQUIREDNESS_WRAPPERS:
            return self.node(args[0], where)
        if tp in LIST_ORIGINS or origin in LIST_ORIGINS:
            return self.list_node(args[0] if args else Any, where)
        if tp is tuple or origin is tuple:
            # Bare ``tuple`` / ``typing.Tuple`` take any length; ``tuple[()]`` takes none.
            return self.tuple_node(args, bare=tp is tuple or tp is typing.Tuple, where=where)
        if tp in SET_ORIGINS or origin in SET_ORIGINS:
            frozen = (origin or tp) in (frozenset, collections.abc.Set)
            return self.set_node(args[0] if args else Any, frozen, where)
        if tp in DICT_ORIGINS or origin in DICT_ORIGINS:
            key, value = (args[0], args[1]) if len(args) == 2 else (str, Any)
            return self.dict_node(key, value, where)
        if isinstance(tp, typing.NewType):
            return self.node(tp.__supertype__, where)
        if origin is None and isinstance(tp, type):
            if issubclass(tp, enum.Enum):
                return self.enum_node(tp, where)
            if dataclasses.is_dataclass(tp):
                return self.object_node(tp, where, is_typeddict=False)
            if issubclass(tp, dict) and hasattr(tp, "__required_keys__"):
                return self.object_node(tp, where, is_typeddict=True)
        raise TypeError(f"unsupported type annotation {type_name(tp)} for {where}")

    # -- composite nodes ----------------------------------------------------------------

    def union_node(self, args: tuple[Any, ...], where: str) -> Node:
        members: list[Node] = []
        nullable = False
        for arg in args:
            if arg is None or arg is type(None):
                nullable = True
                continue
            members.append(self.node(arg, where))
        # An integer argument should keep its type when int and float are both allowed,
        # whichever order the annotation lists them in.
        if INT_NODE in members and FLOAT_NODE in members:
            int_at, float_at = members.index(INT_NODE), members.index(FLOAT_NODE)
            if float_at < int_at:
                members[int_at], members[float_at] = members[float_at], members[int_at]
        if nullable:
            members.append(NULL_NODE)
        if len(members) == 1:
            return members[0]
        schema = {"anyOf": [m.schema for m in members]}
        kinds = frozenset().union(*(m.kinds for m in members))
        label = " or ".join(m.label for m in members)
        hashable = all(m.hashable for m in members)
        member_kinds = [m.kinds for m in members]

        def pick_error(value: Any, errors: list[Mismatch]) -> Mismatch:
            # If exactly one member admits this JSON type, its (deeper) error is the useful
            # one; otherwise say which types would have been accepted.
            kind = kind_of(value)
            candidates = [e for e, k in zip(errors, member_kinds) if kind in k]
            if len(candidates) == 1:
                return candidates[0]
            return Mismatch(f"expected {label}, got {kind}")

        # The same shape serves both directions: member converters for input, member
        # dumpers for output.
        def or_null(inner: Callable[[Any], Any]) -> Callable[[Any], Any]:
            def run(value: Any) -> Any:
                if value is None:
                    return None
                try:
                    return inner(value)
                except Mismatch as exc:
                    raise pick_error(value, [exc, wrong_type("null", value)]) from None

            return run

        def first_match(functions: list[Callable[[Any], Any]]) -> Callable[[Any], Any]:
            def run(value: Any) -> Any:
                errors = []
                for function in functions:
                    try:
                        return function(value)
                    except Mismatch as exc:
                        errors.append(exc)
                raise pick_error(value, errors)

            return run

        if nullable and len(members) == 2:
            convert, dump = or_null(members[0].convert), or_null(members[0].dump)
        else:
            convert = first_match([m.convert for m in members])
            dump = first_match([m.dump for m in members])
        return Node(schema, convert, dump, kinds, label, hashable)

    def literal_node(self, args: tuple[Any, ...], where: str) -> Node:
        pairs: list[tuple[Any, Any]] = []
        for arg in args:
            json_value = arg.value if isinstance(arg, enum.Enum) else arg
            if literal_key(json_value) is None:
                raise TypeError(
                    f"unsupported Literal value {arg!r} for {where}: "
                    "use str, int, float, bool, None or Enum members"
                )
            pairs.append((json_value, arg))
        if not pairs:
            raise TypeError(f"empty Literal for {where}")
        return choice_node(pairs)

    def enum_node(self, cls: type[enum.Enum], where: str) -> Node:
        pairs: list[tuple[Any, Any]] = []
        for member in cls:
            if literal_key(member.value) is None or isinstance(member.value, enum.Enum):
                raise TypeError(
                    f"unsupported type annotation {cls.__qualname__} for {where}: enum values "
                    f"must be str, int, float, bool or None, {member.name} is {member.value!r}"
                )
            pairs.append((member.value, member))
        if not pairs:
            raise TypeError(f"unsupported type annotation {cls.__qualname__} for {where}: empty enum")
        description, _ = class_doc(cls)
        extra: dict[str, Any] = {"title": cls.__name__}
        if description:
            extra["description"] = description
        return choice_node(pairs, label=f"{cls.__name__} ({format_choices([p[0] for p in pairs])})", extra=extra)

    def list_node(self, item_tp: Any, where: str) -> Node:
        item = self.node(item_tp, where)
        schema: dict[str, Any] = {"type": "array"}
        if item.schema:
            schema["items"] = item.schema
        item_convert, item_dump = item.convert, item.dump
        label = "array"

        def convert(value: Any) -> Any:
            if type(value) is not list:
                raise wrong_type(label, value)
            return map_items(item_convert, value)

        def dump(value: Any) -> Any:
            check_array_like(label, value)
            return map_items(item_dump, value)

        return Node(schema, convert, dump, frozenset({"array"}), label, hashable=False)

    def tuple_node(self, args: tuple[Any, ...], bare: bool, where: str) -> Node:
        if args == ((),):  # tuple[()] on Python 3.10
            args = ()
        variadic = bare or (len(args) == 2 and args[1] is Ellipsis)
        if variadic:
            item = self.node(args[0] if args else Any, where)
            items = [item]
            schema: dict[str, Any] = {"type": "array"}
            if item.schema:
                schema["items"] = item.schema
        else:
            if Ellipsis in args:
                raise TypeError(f"unsupported type annotation {args!r} for {where}")
            items = [self.node(arg, where) for arg in args]
            schema = {"type": "array", "minItems": len(items), "maxItems": len(items)}
            if items:
                schema["prefixItems"] = [i.schema for i in items]
        converts = [i.convert for i in items]
        dumps = [i.dump for i in items]
        size = len(items)
        label = "array"
        hashable = all(i.hashable for i in items)

        def convert(value: Any) -> Any:
            if type(value) is not list:
                raise wrong_type(label, value)
            if variadic:
                return tuple(map_items(converts[0], value))
            if len(value) != size:
                raise Mismatch(f"expected an array of {size} items, got {len(value)}")
            return tuple(map_positions(converts, value))

        def dump(value: Any) -> Any:
            check_array_like(label, value)
            value = list(value)
            if variadic:
                return map_items(dumps[0], value)
            if len(value) != size:
                raise Mismatch(f"expected an array of {size} items, got {len(value)}")
            return map_positions(dumps, value)

        return Node(schema, convert, dump, frozenset({"array"}), label, hashable)

    def set_node(self, item_tp: Any, frozen: bool, where: str) -> Node:
        item = self.node(item_tp, where)
        if not item.hashable:
            raise TypeError(
                f"unsupported type annotation set[{type_name(item_tp)}] for {where}: "
                "set items must be hashable (scalars, enums, tuples, frozen dataclasses)"
            )
        schema: dict[str, Any] = {"type": "array", "uniqueItems": True}
        if item.schema:
            schema["items"] = item.schema
        item_convert, item_dump = item.convert, item.dump
        make = frozenset if frozen else set
        label = "array"

        def convert(value: Any) -> Any:
            if type(value) is not list:
                raise wrong_type(label, value)
            out: set[Any] = set()
            for index, element in enumerate(value):
                try:
                    converted = item_convert(element)
                except Mismatch as exc:
                    exc.path.append(index)
                    raise
                if converted in out:
                    raise Mismatch("duplicate item (items must be unique)", at=index)
                out.add(converted)
            return make(out)

        def dump(value: Any) -> Any:
            check_array_like(label, value)
            out = []
            seen: set[Any] = set()
            for index, element in enumerate(value):
                try:
                    dumped = item_dump(element)
                except Mismatch as exc:
                    exc.path.append(index)
                    raise
                key = literal_key(dumped) or json.dumps(dumped, sort_keys=True)
                if key in seen:
                    raise Mismatch("duplicate item (items must be unique)", at=index)
                seen.add(key)
                out.append(dumped)
            return out

        return Node(schema, convert, dump, frozenset({"array"}), label, hashable=False)

    def dict_node(self, key_tp: Any, value_tp: Any, where: str) -> Node:
        key_base = split_annotated(key_tp)[0]
        if key_base is not str and key_base is not Any:
            raise TypeError(
                f"unsupported type annotation dict[{type_name(key_tp)}, ...] for {where}: "
                "JSON object keys are strings, use dict[str, ...]"
            )
        value = self.node(value_tp, where)
        schema: dict[str, Any] = {"type": "object"}
        label = "object"
        if value is ANY_NODE:

            def convert(v: Any) -> Any:
                if isinstance(v, dict):
                    return v
                raise wrong_type(label, v)

        else:
            schema["additionalProperties"] = value.schema
            value_convert = value.convert

            def convert(v: Any) -> Any:
                if not isinstance(v, dict):
                    raise wrong_type(label, v)
                out = {}
                for k, element in v.items():
                    try:
                        out[k] = value_convert(element)
                    except Mismatch as exc:
                        exc.path.append(k)
                        raise
                return out

        value_dump = value.dump

        def dump(v: Any) -> Any:
            if not isinstance(v, Mapping):
                raise wrong_type(label, v)
            out = {}
            for k, element in v.items():
                if not isinstance(k, str):
                    raise Mismatch(f"object keys must be strings, got {kind_of(k)} key {k!r}")
                try:
                    out[str.__str__(k)] = value_dump(element)
                except Mismatch as exc:
                    exc.path.append(k)
                    raise
            return out

        return Node(schema, convert, dump, frozenset({"object"}), label, hashable=False)

    def def_name(self, cls: type) -> str:
        base = re.sub(r"[^A-Za-z0-9_.-]", "_", cls.__name__)
        name = base
        counter = 2
        while name in self.def_owner and self.def_owner[name] is not cls:
            name = f"{base}{counter}"
            counter += 1
        self.def_owner[name] = cls
        return name

    def object_node(self, cls: type, where: str, is_typeddict: bool) -> Node:
        known = self.named.get(cls)
        if known is not None:
            return known
        name = self.def_name(cls)
        label = f"{name} object"
        hashable = (
            not is_typeddict
            and cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
            and cls.__dataclass_params__.eq  # type: ignore[attr-defined]
        )
        # (field name, convert, dump, default); default is REQUIRED, OMIT or a value.
        specs: list[tuple[str, Callable[[Any], Any], Callable[[Any], Any], Any]] = []
        names: set[str] = set()
        # The converter closes over ``specs``, filled below: registering the finished node
        # before compiling the fields lets a recursive reference capture the real functions.
        convert, dump = _object_functions(cls, label, specs, names, is_typeddict)
        node = Node({"$ref": f"#/$defs/{name}"}, convert, dump, frozenset({"object"}), label, hashable)
        self.named[cls] = node
        self.defs[name] = None
        description, attribute_docs = class_doc(cls)
        try:
            hints = typing.get_type_hints(cls, include_extras=True)
        except Exception as exc:
            raise TypeError(f"cannot resolve the type hints of {cls.__qualname__} ({where}): {exc}") from None

        properties: dict[str, Any] = {}
        required: list[str] = []
        if is_typeddict:
            required_keys = cls.__required_keys__  # type: ignore[attr-defined]
            entries = [
                (k, hint, typeddict_key_required(hint, k in required_keys), MISSING)
                for k, hint in hints.items()
            ]
        else:
            entries = []
            for f in dataclasses.fields(cls):
                if not f.init:
                    continue
                if f.default is not dataclasses.MISSING:
                    entries.append((f.name, hints.get(f.name, Any), False, f.default))
                elif f.default_factory is not dataclasses.MISSING:
                    entries.append((f.name, hints.get(f.name, Any), False, FACTORY))
                else:
                    entries.append((f.name, hints.get(f.name, Any), True, MISSING))
        field_metadata: dict[str, Mapping[str, Any]] = (
            {} if is_typeddict else {f.name: f.metadata for f in dataclasses.fields(cls)}
        )
        for field_name, hint, is_required, class_default in entries:
            field_where = f"field {field_name!r} of {cls.__qualname__} ({where})"
            base, field_description, fld = split_annotated(strip_requiredness(hint))
            child = self.apply_meta(
                self.node(base, field_where), field_description, fld, field_where
            )
            schema = dict(child.schema)
            if "description" not in schema:
                doc = attribute_docs.get(field_name)
                meta_doc = field_metadata.get(field_name, {}).get("description")
                if not doc and isinstance(meta_doc, str):
                    doc = meta_doc
                if doc:
                    schema["description"] = doc
            if is_required and fld is not None and fld.default is not MISSING:
                # Field(default=...) on a field the class itself requires: we pass it.
                is_required = False
                spec_default: Any = fld.default
                set_default(schema, child, fld.default)
            elif is_required:
                spec_default = REQUIRED
            else:
                # The class applies its own default / factory; an optional TypedDict key
                # simply stays absent.
                spec_default = OMIT
                if class_default is not MISSING and class_default is not FACTORY:
                    set_default(schema, child, class_default)
            properties[field_name] = schema
            if is_required:
                required.append(field_name)
            specs.append((field_name, child.convert, child.dump, spec_default))
            names.add(field_name)

        definition: dict[str, Any] = {"type": "object", "title": cls.__name__}
        if description:
            definition["description"] = description
        definition["properties"] = properties
        if required:
            definition["required"] = required
        definition["additionalProperties"] = False
        self.defs[name] = definition
        return node


def set_default(schema: dict[str, Any], node: Node, default: Any) -> None:
    """Put a default into a property schema when it can be written as JSON."""
    try:
        schema["default"] = node.dump(default)
        return
    except Mismatch:
        pass
    try:
        value = to_jsonable(default)
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return
    schema["default"] = value


def _object_functions(
    cls: type,
    label: str,
    specs: list[tuple[str, Callable[[Any], Any], Callable[[Any], Any], Any]],
    names: set[str],
    is_typeddict: bool,
) -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
    """convert/dump for a dataclass or TypedDict whose fields are compiled in ``specs``."""

    def read_fields(value: Mapping[Any, Any], use_dump: bool) -> dict[str, Any]:
        out: dict[str, Any] = {}
        seen = 0
        for field_name, field_convert, field_dump, default in specs:
            if field_name in value:
                seen += 1
                try:
                    out[field_name] = (field_dump if use_dump else field_convert)(value[field_name])
                except Mismatch as exc:
                    exc.path.append(field_name)
                    raise
            elif default is REQUIRED:
                raise Mismatch("missing required property", at=field_name)
            elif default is not OMIT:
                out[field_name] = field_dump(default) if use_dump else default
        if seen != len(value):
            raise unknown_key_error(value, names, "property")
        return out

    def convert(value: Any) -> Any:
        if not isinstance(value, dict):
            raise wrong_type(label, value)
        kwargs = read_fields(value, use_dump=False)
        if is_typeddict:
            return kwargs
        try:
            return cls(**kwargs)
        except (TypeError, ValueError) as exc:
            raise Mismatch(f"invalid {cls.__name__}: {exc}") from None

    def dump(value: Any) -> Any:
        if not is_typeddict and isinstance(value, cls):
            out: dict[str, Any] = {}
            for field_name, _, field_dump, _ in specs:
                try:
                    out[field_name] = field_dump(getattr(value, field_name))
                except Mismatch as exc:
                    exc.path.append(field_name)
                    raise
            return out
        if isinstance(value, Mapping):
            return read_fields(value, use_dump=True)
        raise wrong_type(label, value)

    return convert, dump
