"""The tools/call handler's common case, compiled: a call of a known tool that asks for no
task and needs no header checks runs the tool's compiled call (``Tool._direct``) straight
from the session's request path (:class:`mcpfast._core.dispatch.RouteHandler`); any other
call -- a bad name, an unknown tool, a task, a tool with header parameters or its own
``call`` -- goes to the full handler (:mod:`mcpfast.server.features.tool_methods`), which answers it.

Why compiled: the handler was the largest Python frame left on a request's path (52
bytecodes), a few dict reads and attribute reads.
"""
cimport cython

from mcpfast._core.cpython cimport mf_member_get, slot_descriptor
from mcpfast._core.dispatch cimport RouteHandler

from mcpfast.server.request.context import Context
from mcpfast.server.request.state import ProtocolState
from mcpfast.server.features.tools import Tool

# The slots read on every call, through their descriptors (exact types only: a subclass
# may define the name otherwise) -- no lookup in the type per read.
cdef type _TOOL = Tool
cdef type _CONTEXT = Context
cdef type _STATE_TYPE = ProtocolState
cdef object _DIRECT = slot_descriptor(Tool, "_direct")
cdef object _STATE = slot_descriptor(Context, "state")
cdef object _FEATURES = slot_descriptor(ProtocolState, "features")


@cython.auto_pickle(False)
cdef class ToolsCall(RouteHandler):
    """``handler(params, ctx)`` of tools/call: ``tools`` is the server's dict of tools by
    name (the catalog's own, read at each call), ``fully`` the handler of every call but
    the common one (readable: it decides every call, and the property test of
    tests/server/test_compiled_rules_agree.py proves the common case answers the same)."""

    cdef dict tools
    cdef readonly object fully

    def __init__(self, dict tools not None, fully):
        if not callable(fully):
            raise TypeError(f"fully must be callable, not {type(fully).__name__}")
        self.tools = tools
        self.fully = fully

    cdef object handle(self, object params, object ctx):
        cdef object name, tool, direct, state
        if type(params) is dict:
            name = (<dict>params).get("name")
            if type(name) is str:
                tool = self.tools.get(name)
                if tool is not None:
                    direct = mf_member_get(_DIRECT, tool) if type(tool) is _TOOL else tool._direct
                    if direct is not None and "task" not in <dict>params:
                        state = mf_member_get(_STATE, ctx) if type(ctx) is _CONTEXT else ctx.state
                        return direct((<dict>params).get("arguments"), ctx,
                                      mf_member_get(_FEATURES, state) if type(state) is _STATE_TYPE
                                      else state.features)
        return self.fully(params, ctx)
