"""MountOptions: how one upstream's catalogue is shown downstream.

The namespace and its separator (``fs`` + ``_`` makes ``fs_read_file`` of ``read_file``;
an empty namespace mounts names unchanged), allow/deny lists by name and by tag, renames of
tools (name, description, argument names) and the upstream's timeouts. Pure data and the
rules that apply it; no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional

__all__ = ["DEFAULT_CALL_TIMEOUT", "DEFAULT_SEPARATOR", "DEFAULT_START_TIMEOUT", "MountOptions",
           "Rename", "tags_of"]

DEFAULT_SEPARATOR = "_"
#: Seconds a forwarded request may wait for the upstream's answer unless told otherwise.
DEFAULT_CALL_TIMEOUT = 60.0
#: Seconds an upstream has to start and answer initialize.
DEFAULT_START_TIMEOUT = 30.0


def _names(label: str, value: Any) -> frozenset[str]:
    if value is None:
        return frozenset()
    if isinstance(value, str):
        value = (value,)
    names = frozenset(value)
    if not all(isinstance(name, str) and name for name in names):
        raise TypeError(f"{label} must be non-empty strs, got {sorted(map(repr, names))}")
    return names


def _seconds(label: str, value: Any) -> Optional[float]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"{label} must be a positive number of seconds or None, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class Rename:
    """A tool shown under another ``name`` (None: its namespaced own name), with another
    ``description`` (None: its own) and arguments renamed (``arguments``: the upstream's
    name -> the name shown downstream)."""

    name: Optional[str] = None
    description: Optional[str] = None
    arguments: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, tool: str, value: Any) -> Rename:
        """A Rename from a config value: a str (the new name) or a mapping with ``name``,
        ``description``, ``arguments``. ValueError/TypeError saying what is wrong."""
        if isinstance(value, Rename):
            return value
        if isinstance(value, str):
            return cls(name=value)
        if not isinstance(value, Mapping):
            raise TypeError(f"the rename of tool {tool!r} must be a str or an object, "
                            f"not {type(value).__name__}")
        unknown = set(value) - {"name", "description", "arguments"}
        if unknown:
            raise ValueError(f"the rename of tool {tool!r} has unknown keys: {', '.join(sorted(unknown))}")
        name, description = value.get("name"), value.get("description")
        for label, text in (("name", name), ("description", description)):
            if text is not None and (not isinstance(text, str) or (label == "name" and not text)):
                raise TypeError(f"the rename of tool {tool!r}: {label} must be a non-empty str")
        arguments = value.get("arguments") or {}
        if not isinstance(arguments, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) and v for k, v in arguments.items()):
            raise TypeError(f"the rename of tool {tool!r}: arguments must map str to str")
        if len(set(arguments.values())) != len(arguments):
            raise ValueError(f"the rename of tool {tool!r} gives two arguments the same name")
        return cls(name=name, description=description, arguments=dict(arguments))


def tags_of(item: Mapping[str, Any]) -> frozenset[str]:
    """The tags an upstream gave an item in its ``_meta`` (``tags``, or a server-specific
    object holding ``tags``, as some servers publish them); empty when none."""
    meta = item.get("_meta")
    if not isinstance(meta, Mapping):
        return frozenset()
    found: set[str] = set()
    candidates = [meta.get("tags")]
    candidates += [value.get("tags") for value in meta.values() if isinstance(value, Mapping)]
    for tags in candidates:
        if isinstance(tags, (list, tuple)):
            found.update(tag for tag in tags if isinstance(tag, str))
    return frozenset(found)


@dataclass(frozen=True)
class MountOptions:
    """How an upstream is mounted (module docstring). ``allow``/``deny``: names (the
    upstream's own) let through / kept out (an empty allow list lets everything through);
    ``allow_tags``/``deny_tags``: the same by tag (:func:`tags_of`); the filters apply to
    tools and prompts. ``rename``: tool name -> :class:`Rename` (or the new name).
    ``timeout``: seconds a forwarded request may take (None: no limit);
    ``start_timeout``: seconds to start and initialize."""

    namespace: str = ""
    separator: str = DEFAULT_SEPARATOR
    allow: frozenset[str] = frozenset()
    deny: frozenset[str] = frozenset()
    allow_tags: frozenset[str] = frozenset()
    deny_tags: frozenset[str] = frozenset()
    rename: Mapping[str, Rename] = field(default_factory=dict)
    timeout: Optional[float] = DEFAULT_CALL_TIMEOUT
    start_timeout: Optional[float] = DEFAULT_START_TIMEOUT

    @classmethod
    def make(cls, *, namespace: Optional[str] = "", separator: str = DEFAULT_SEPARATOR,
             allow: Iterable[str] = (), deny: Iterable[str] = (),
             allow_tags: Iterable[str] = (), deny_tags: Iterable[str] = (),
             rename: Optional[Mapping[str, Any]] = None,
             timeout: Optional[float] = DEFAULT_CALL_TIMEOUT,
             start_timeout: Optional[float] = DEFAULT_START_TIMEOUT) -> MountOptions:
        """Checked options (TypeError/ValueError saying which is wrong)."""
        namespace = namespace or ""
        if not isinstance(namespace, str):
            raise TypeError(f"namespace must be a str, not {type(namespace).__name__}")
        if not isinstance(separator, str):
            raise TypeError(f"separator must be a str, not {type(separator).__name__}")
        if namespace and not separator:
            raise ValueError("separator must not be empty when a namespace is given")
        renames = {tool: Rename.of(tool, value) for tool, value in (rename or {}).items()}
        return cls(namespace=namespace, separator=separator, allow=_names("allow", allow),
                   deny=_names("deny", deny), allow_tags=_names("allow_tags", allow_tags),
                   deny_tags=_names("deny_tags", deny_tags), rename=renames,
                   timeout=_seconds("timeout", timeout),
                   start_timeout=_seconds("start_timeout", start_timeout))

    def public_name(self, name: str) -> str:
        """The downstream name of the upstream's ``name`` (its rename, else namespaced)."""
        renamed = self.rename.get(name)
        if renamed is not None and renamed.name is not None:
            return renamed.name
        return f"{self.namespace}{self.separator}{name}" if self.namespace else name

    def admits(self, item: Mapping[str, Any]) -> bool:
        """Whether a tool or prompt passes the allow/deny lists."""
        name = item.get("name")
        tags = tags_of(item)
        if name in self.deny or tags & self.deny_tags:
            return False
        if self.allow or self.allow_tags:
            return name in self.allow or bool(tags & self.allow_tags)
        return True
