"""What each MCP protocol version can carry: `VersionFeatures`, one immutable object per version.

`VersionFeatures` answers "may this field / message exist under this version?" once per version,
so per-request code tests a precomputed attribute instead of comparing version strings.
Which fields each version has was read from the versions' schema.json files.
"""

from __future__ import annotations

from typing import Any

from mcpfast.protocol.versions import SPOKEN_VERSIONS, STATELESS, era_of

__all__ = ["FEATURES", "VersionFeatures", "features_for"]


class VersionFeatures:
    """What one protocol version can carry (all plain bool attributes, fixed per version).

    version               the version string
    batches               JSON-RPC batches (2025-03-26 only: added then, removed in 2025-06-18)
    audio                 AudioContent blocks                                    (>= 2025-03-26)
    tool_annotations      Tool.annotations (ToolAnnotations, with its title)    (>= 2025-03-26)
    completions           the ``completions`` server capability                 (>= 2025-03-26)
    progress_message      ``message`` in notifications/progress                 (>= 2025-03-26)
    titles                ``title`` on Tool, Resource, ResourceTemplate, Prompt,
                          PromptArgument and Implementation                     (>= 2025-06-18)
    structured_output     Tool.outputSchema and CallToolResult.structuredContent (>= 2025-06-18)
    meta                  ``_meta`` on Tool, Resource, Prompt, contents, blocks  (>= 2025-06-18)
    resource_links        ResourceLink content blocks                           (>= 2025-06-18)
    elicitation           elicitation/create                                    (>= 2025-06-18)
    completion_context    CompleteRequest.params.context                        (>= 2025-06-18)
    icons                 ``icons`` on Tool, Resource, Prompt, Implementation,
                          Implementation.description and websiteUrl             (>= 2025-11-25)
    url_elicitation       elicitation/create with mode "url"                    (>= 2025-11-25)
    sampling_tools        tools / toolChoice in sampling/createMessage          (>= 2025-11-25)
    experimental_tasks    the 2025-11-25 tasks utility: the ``tasks`` capability, Tool.execution,
                          task-augmented tools/call, tasks/get|result|list|cancel (2025-11-25
                          only: 2026-07-28 moved tasks to an extension)
    content_current       content blocks need no downgrade (see content.downgrade_content)
    stateless             the stateless era: state per request from ``_meta``, no handshake,
                          ``resultType`` and server info on results, caching hints on
                          lists and reads, no server-to-client requests (2026-07-28)
    """

    __slots__ = (
        "version",
        "batches",
        "audio",
        "tool_annotations",
        "completions",
        "progress_message",
        "titles",
        "structured_output",
        "meta",
        "resource_links",
        "elicitation",
        "completion_context",
        "icons",
        "url_elicitation",
        "sampling_tools",
        "experimental_tasks",
        "content_current",
        "stateless",
    )

    def __init__(self, version: str) -> None:
        if version not in SPOKEN_VERSIONS:
            raise ValueError(f"unsupported MCP protocol version {version!r}")
        self.version = version
        self.batches = version == "2025-03-26"
        self.audio = version >= "2025-03-26"
        self.tool_annotations = version >= "2025-03-26"
        self.completions = version >= "2025-03-26"
        self.progress_message = version >= "2025-03-26"
        self.titles = version >= "2025-06-18"
        self.structured_output = version >= "2025-06-18"
        self.meta = version >= "2025-06-18"
        self.resource_links = version >= "2025-06-18"
        self.elicitation = version >= "2025-06-18"
        self.completion_context = version >= "2025-06-18"
        self.icons = version >= "2025-11-25"
        self.url_elicitation = version >= "2025-11-25"
        self.sampling_tools = version >= "2025-11-25"
        self.experimental_tasks = version == "2025-11-25"
        self.stateless = era_of(version) == STATELESS
        self.content_current = version >= "2025-11-25"

    def __setattr__(self, name: str, value: Any) -> None:
        if hasattr(self, "content_current"):  # set last in __init__
            raise AttributeError("VersionFeatures are immutable")
        object.__setattr__(self, name, value)

    def __repr__(self) -> str:
        return f"<VersionFeatures {self.version}>"


FEATURES: dict[str, VersionFeatures] = {version: VersionFeatures(version) for version in SPOKEN_VERSIONS}


def features_for(version: str) -> VersionFeatures:
    """The VersionFeatures of a supported version (KeyError for others)."""
    return FEATURES[version]
