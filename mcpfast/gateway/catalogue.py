"""MountedCatalogue: one upstream's tools, prompts, resources and templates as shown
downstream, with the maps that route a downstream name or URI back to the upstream's.

Built from the lists the upstream answered (dicts as on the wire) and its MountOptions:
tools and prompts filtered and renamed (a renamed tool's description and argument names
too), resources and templates keep their URIs (so links inside results keep working) and
get the namespace on their ``name``. Immutable once built: a refresh builds a new one.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from mcpfast.gateway.options import MountOptions, Rename
from mcpfast.protocol.header_params import HeaderParam, header_params_of
from mcpfast.server.uri_template import UriTemplate

__all__ = ["MountedCatalogue", "MountedTool"]


class MountedTool:
    """A tool as shown downstream: ``listed`` (the dict of tools/list), ``upstream_name``,
    the argument renames to undo on a call (downstream name -> upstream name) and
    ``header_params``, the arguments its schema mirrors into ``Mcp-Param-*`` headers
    (2026-07-28 HTTP: checked by the gateway as a server must)."""

    __slots__ = ("listed", "upstream_name", "arguments_back", "header_params")

    def __init__(self, listed: dict[str, Any], upstream_name: str,
                 arguments_back: Mapping[str, str],
                 header_params: tuple[HeaderParam, ...] = ()) -> None:
        self.listed = listed
        self.upstream_name = upstream_name
        self.arguments_back = arguments_back
        self.header_params = header_params

    def upstream_arguments(self, arguments: Any) -> Any:
        """The call's arguments under the upstream's argument names."""
        if not self.arguments_back or not isinstance(arguments, dict):
            return arguments
        back = self.arguments_back
        return {back.get(key, key): value for key, value in arguments.items()}


def _renamed_schema(schema: Any, arguments: Mapping[str, str]) -> Any:
    if not arguments or not isinstance(schema, dict):
        return schema
    schema = dict(schema)
    properties = schema.get("properties")
    if isinstance(properties, dict):
        schema["properties"] = {arguments.get(k, k): v for k, v in properties.items()}
    required = schema.get("required")
    if isinstance(required, list):
        schema["required"] = [arguments.get(k, k) if isinstance(k, str) else k for k in required]
    return schema


def _tool(item: dict[str, Any], options: MountOptions) -> Optional[MountedTool]:
    name = item["name"]
    rename = options.rename.get(name) or Rename()
    listed = dict(item)
    listed["name"] = options.public_name(name)
    if rename.description is not None:
        listed["description"] = rename.description
    if rename.arguments:
        listed["inputSchema"] = _renamed_schema(item.get("inputSchema"), rename.arguments)
    back = {new: old for old, new in rename.arguments.items()}
    schema = listed.get("inputSchema")
    try:
        header_params = header_params_of(schema) if isinstance(schema, dict) else ()
    except ValueError:
        return None  # malformed x-mcp-header annotations: clients must drop the tool, so it is not shown
    return MountedTool(listed, name, back, header_params)


def _named(item: dict[str, Any], options: MountOptions) -> dict[str, Any]:
    listed = dict(item)
    if isinstance(item.get("name"), str):
        listed["name"] = options.public_name(item["name"]) if options.namespace else item["name"]
    return listed


def _valid(items: Any, key: str) -> list[dict[str, Any]]:
    # What a misbehaving upstream lists without its key is left out, not a crash.
    if not isinstance(items, list):
        return []
    return [item for item in items if isinstance(item, dict) and isinstance(item.get(key), str)]


class MountedCatalogue:
    """One upstream's public catalogue (module docstring)."""

    def __init__(self, options: MountOptions, tools: Any = (), prompts: Any = (),
                 resources: Any = (), templates: Any = ()) -> None:
        self.options = options
        self.tools: dict[str, MountedTool] = {}
        for item in _valid(tools, "name"):
            if options.admits(item):
                tool = _tool(item, options)
                if tool is not None:
                    self.tools[tool.listed["name"]] = tool
        self.prompts: dict[str, tuple[dict[str, Any], str]] = {}
        for item in _valid(prompts, "name"):
            if options.admits(item):
                listed = dict(item)
                listed["name"] = options.public_name(item["name"]) if options.namespace else item["name"]
                self.prompts[listed["name"]] = (listed, item["name"])
        self.resources: dict[str, dict[str, Any]] = {
            item["uri"]: _named(item, options) for item in _valid(resources, "uri")}
        self.templates: list[tuple[dict[str, Any], Optional[UriTemplate]]] = []
        for item in _valid(templates, "uriTemplate"):
            try:
                matcher: Optional[UriTemplate] = UriTemplate(item["uriTemplate"])
            except ValueError:
                matcher = None
            self.templates.append((_named(item, options), matcher))

    def listed(self, kind: str) -> list[dict[str, Any]]:
        """The items of ``kind`` ("tools", "prompts", "resources", "resourceTemplates")
        as tools/list (...) shows them downstream."""
        if kind == "tools":
            return [tool.listed for tool in self.tools.values()]
        if kind == "prompts":
            return [listed for listed, _ in self.prompts.values()]
        if kind == "resources":
            return list(self.resources.values())
        return [listed for listed, _ in self.templates]

    def serves_uri(self, uri: str) -> bool:
        """Whether ``uri`` is one of the upstream's resources or matches its templates."""
        if uri in self.resources:
            return True
        return any(m is not None and m.match(uri) is not None for _, m in self.templates)

    def serves_template(self, template: str) -> bool:
        """Whether ``template`` is one of the upstream's resource templates."""
        return any(listed["uriTemplate"] == template for listed, _ in self.templates)
