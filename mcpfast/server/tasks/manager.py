"""Tasks: a ``tools/call`` answered with a handle, its work going on in the background.

A tool registered with ``task_support="optional"`` or ``"required"`` may run as a task::

    @app.tool(task_support="optional")
    async def render(scene: str, ctx: Context) -> str:
        ...                           # minutes of work
        answer = await ctx.elicit("Keep going?", {"type": "object", "properties": {}})
        return "done"

When the request allows it -- a 2026-07-28 request whose client capabilities carry the
extension ``io.modelcontextprotocol/tasks``, or a 2025-11-25 request with ``params.task``
-- the server answers at once with a CreateTaskResult, and the function goes on in its
own asyncio task; the client polls ``tasks/get`` (and under 2025-11-25 fetches the result
with ``tasks/result``). Otherwise the call runs as any other (a ``"required"`` tool is
refused: -32021 naming the extension under 2026-07-28, -32601 under 2025-11-25 and older).

When the task is made:

- ``task_start="call"`` (the default): before the function starts;
- ``task_start="handler"``: when the function calls ``await ctx.run_as_task()``. What it
  does before -- under 2026-07-28, asking the client with ``ctx.elicit`` and the
  InputRequiredResult round trips (:mod:`mcpfast.server.request.input_required`) -- is answered
  on the request itself; from the call on it is the task's. ``run_as_task()`` returns
  False (and the function goes on as a plain call) when the request allows no task.

Inside a task (2026-07-28) ``ctx.elicit`` / ``sample`` / ``list_roots`` park it in
``input_required`` with the question in ``inputRequests`` (keys unique over the task's
life) until ``tasks/update`` brings the answer; questions asked side by side are all
pending at once and may be answered one by one. Under 2025-11-25 they go to the client as
requests tagged with the task (``_meta["io.modelcontextprotocol/related-task"]``), the
task being ``input_required`` meanwhile, and every status change is also sent as
``notifications/tasks/status`` while the connection lasts. A task sends no log or
progress notifications (its request has been answered). Under 2026-07-28 every change of
a task's status (and of its pending questions) is published as a
:class:`~mcpfast.server.publisher.TaskStatus` event, which the ``subscriptions/listen``
streams following the task's id send as ``notifications/tasks``
(:mod:`mcpfast.server.listen`) -- in every process, when the server's publisher is shared.

How a task ends: the function's return value -> ``completed`` with the CallToolResult
(a tool error, ``isError: true``, is ``completed`` under 2026-07-28 and ``failed`` under
2025-11-25, as each revision says); a :class:`~mcpfast.jsonrpc.JSONRPCError` raised by the
function -> ``failed`` with that error; ``tasks/cancel`` -> ``cancelled`` (the function's
asyncio task is cancelled). Records live in the server's
:class:`~mcpfast.server.tasks.store.TaskStore` for their TTL; a task is bound to the
authenticated subject when there is one (and under 2025-11-25 without authentication, to
the connection), and its id is 128 random bits.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import secrets
from typing import TYPE_CHECKING, Any, Callable, Optional

from mcpfast.jsonrpc.errors import INTERNAL_ERROR, InvalidParams, JSONRPCError, MethodNotFound, RequestTimeout
from mcpfast.protocol import methods
from mcpfast.protocol.meta_keys import RELATED_TASK, TASKS_EXTENSION
from mcpfast.server.publisher import Event, TaskStatus
from mcpfast.server.request.input_required import input_key
from mcpfast.server.request.requests_to_client import ClientCapabilityError
from mcpfast.server.request.state import ProtocolState
from mcpfast.server.tasks.record import (
    CANCELLED,
    COMPLETED,
    EXPERIMENTAL,
    EXTENSION,
    FAILED,
    INPUT_REQUIRED,
    WORKING,
    TaskRecord,
)
from mcpfast.server.tasks.store import MemoryTaskStore, TaskStore
from mcpfast.server.tasks.support import TASK_STARTS, TASK_SUPPORT

if TYPE_CHECKING:
    from mcpfast.server.features.tools import Tool
    from mcpfast.server.request.context import Context

__all__ = ["DEFAULT_POLL_INTERVAL_MS", "DEFAULT_TASK_TTL_MS", "TASK_STARTS", "TASK_SUPPORT",
           "TaskManager", "TaskRun"]

_LOGGER = logging.getLogger("mcpfast.server")

# How long a task's record is kept (from its creation) unless the server says otherwise,
# and the polling interval suggested to clients.
DEFAULT_TASK_TTL_MS = 3_600_000
DEFAULT_POLL_INTERVAL_MS = 500
# The attribute of a ServerConnection holding its task scope (2025-11-25, no auth).
_SCOPE_ATTRIBUTE = "_task_scope"


def task_form(state: ProtocolState) -> Optional[str]:
    """The task form a request in ``state`` may use: EXTENSION for a 2026-07-28 request
    whose client declares the tasks extension, EXPERIMENTAL where the version has the
    2025-11-25 tasks utility, None otherwise."""
    features = state.features
    if features is None:
        return None
    if features.stateless:
        extensions = state.client_capabilities.get("extensions")
        return EXTENSION if type(extensions) is dict and TASKS_EXTENSION in extensions else None
    return EXPERIMENTAL if features.experimental_tasks else None


def missing_extension(what: str) -> ClientCapabilityError:
    """-32021 naming the tasks extension (data.requiredCapabilities.extensions)."""
    return ClientCapabilityError(
        f"extensions.{TASKS_EXTENSION}",
        f"Missing required client capability: {what} needs the {TASKS_EXTENSION} extension "
        f"in _meta[\"io.modelcontextprotocol/clientCapabilities\"].extensions")


def error_object(exc: JSONRPCError) -> dict[str, Any]:
    """The JSON-RPC error object of an exception."""
    error: dict[str, Any] = {"code": exc.code, "message": exc.message}
    if exc.has_data:
        error["data"] = exc.data
    return error


def _quiet(state: ProtocolState) -> ProtocolState:
    """A copy of a 2026-07-28 request's state that lets no log message through."""
    quiet = ProtocolState(log_level=10**6)
    if state.protocol_version is not None:
        quiet.negotiate(state.protocol_version, state.client_info, state.client_capabilities)
    quiet.initialized = True
    return quiet


class TaskManager:
    """The tasks of one Server (module docstring): creates them, runs them, answers the
    ``tasks/*`` methods' questions about them.

    store: where records live (a MemoryTaskStore unless given); ttl_ms: how long a
    record is kept from its creation (None: until the store needs the room; a 2025-11-25
    client may ask for less); poll_interval_ms: the polling interval suggested;
    offered: whether the server offers tasks now (the tasks/* methods exist only then);
    publish: where a 2026-07-28 task's status changes go (the server's publisher), if
    anywhere.
    """

    __slots__ = ("store", "ttl_ms", "poll_interval_ms", "running", "offered", "publish", "_relays")

    def __init__(self, store: Optional[TaskStore] = None, *,
                 ttl_ms: Optional[int] = DEFAULT_TASK_TTL_MS,
                 poll_interval_ms: Optional[int] = DEFAULT_POLL_INTERVAL_MS,
                 offered: Callable[[], bool] = lambda: True,
                 publish: Optional[Callable[[Event], Any]] = None) -> None:
        for label, value in (("task_ttl_ms", ttl_ms), ("task_poll_interval_ms", poll_interval_ms)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"{label} must be an int >= 1 or None, got {value!r}")
        self.store: TaskStore = store if store is not None else MemoryTaskStore()
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        # Tasks whose work runs in this process, by id.
        self.running: dict[str, TaskRun] = {}
        # Whether the server offers tasks at all (a tool that supports them is registered):
        # without, the tasks/* methods do not exist.
        self.offered = offered
        self.publish = publish
        # Operations relayed from other processes while they run (asyncio keeps only weak
        # references to tasks).
        self._relays: set[asyncio.Task[Any]] = set()

    # -- which form, whose task ----------------------------------------------------------

    @staticmethod
    def form_of_call(ctx: Context, params: dict[str, Any]) -> Optional[str]:
        """The task form a tools/call allows (None: no task)."""
        form = task_form(ctx.state)
        return form if form != EXPERIMENTAL or "task" in params else None

    def form_of_method(self, ctx: Context, method: str) -> str:
        """The task form of a ``tasks/*`` request, or the error refusing it."""
        state = ctx.state
        features = state.features
        if not self.offered():
            raise MethodNotFound(f"Method not found: {method} (this server runs no tasks)",
                                 {"method": method})
        if features is not None and features.stateless:
            extensions = state.client_capabilities.get("extensions")
            if type(extensions) is not dict or TASKS_EXTENSION not in extensions:
                raise missing_extension(method)
            return EXTENSION
        if features is not None and features.experimental_tasks and method != methods.TASKS_UPDATE:
            return EXPERIMENTAL
        version = features.version if features is not None else "this protocol version"
        raise MethodNotFound(f"Method not found: {method} does not exist in {version}",
                             {"method": method})

    @staticmethod
    def principal(ctx: Context, form: str) -> Optional[str]:
        """Whose task it is: the authenticated subject; under 2025-11-25 without
        authentication, the connection; else nobody (the id alone guards it)."""
        auth = ctx.auth
        if auth is not None:
            return f"{form}:subject:{auth.subject}"
        if form == EXTENSION:
            return None
        connection = ctx.connection
        scope = getattr(connection, _SCOPE_ATTRIBUTE, None)
        if scope is None:
            scope = secrets.token_urlsafe(12)
            setattr(connection, _SCOPE_ATTRIBUTE, scope)
        return f"{form}:connection:{scope}"

    async def find(self, ctx: Context, params: Any, form: str) -> TaskRecord:
        """The record a ``tasks/*`` request names; -32602 when there is none for it."""
        if type(params) is not dict or type(params.get("taskId")) is not str:
            raise InvalidParams(f"{ctx.method}: params.taskId must be a string", {"param": "taskId"})
        task_id = params["taskId"]
        record = await self.store.get(task_id)
        if record is None or record.form != form or record.principal != self.principal(ctx, form):
            raise InvalidParams(f"Invalid params: unknown task {task_id!r}", {"taskId": task_id})
        return record

    async def visible(self, ctx: Context, task_ids: list[str]) -> list[TaskRecord]:
        """The 2026-07-28 tasks among ``task_ids`` that the caller may follow (the ones
        ``tasks/get`` would answer for it), in the order asked; the others are left out."""
        principal = self.principal(ctx, EXTENSION)
        found = []
        for task_id in task_ids:
            record = await self.store.get(task_id)
            if record is not None and record.form == EXTENSION and record.principal == principal:
                found.append(record)
        return found

    def changed(self, record: TaskRecord) -> None:
        """A 2026-07-28 task's status or pending questions changed (and are stored): tell
        the listen streams following it."""
        if record.form == EXTENSION and self.publish is not None:
            self.publish(TaskStatus(record.detailed()))

    # -- tools/call ----------------------------------------------------------------------

    def call_tool(self, tool: Tool, params: dict[str, Any], ctx: Context) -> Any:
        """Answer a tools/call of a tool that supports tasks (module docstring)."""
        form = self.form_of_call(ctx, params)
        if form is None:
            if tool.task_support == "required":
                raise self._required(tool, ctx)
            return tool.call(params.get("arguments"), ctx)
        ttl_ms = self.ttl_ms
        if form == EXPERIMENTAL:
            requested = params.get("task")
            if type(requested) is not dict:
                raise InvalidParams("tools/call: params.task must be an object", {"param": "task"})
            ttl = requested.get("ttl")
            if ttl is not None:
                if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or ttl <= 0:
                    raise InvalidParams("tools/call: params.task.ttl must be a number > 0",
                                        {"param": "task.ttl"})
                ttl_ms = int(ttl) if ttl_ms is None else min(int(ttl), ttl_ms)
        run = TaskRun(self, tool, ctx, form, ttl_ms)
        return run.start(params.get("arguments"))

    @staticmethod
    def _required(tool: Tool, ctx: Context) -> JSONRPCError:
        features = ctx.state.features
        if features is not None and features.stateless:
            return missing_extension(f"the tool {tool.name!r}")
        return MethodNotFound(
            f"Method not found: the tool {tool.name!r} runs only as a task "
            f"(send params.task; MCP 2025-11-25)", {"tool": tool.name})

    # -- the tasks/* methods -------------------------------------------------------------

    # -- other processes (a shared store) ----------------------------------------------

    async def start(self) -> None:
        """Listen for operations other processes relay to the tasks running here (a store
        shared by several processes, such as RedisTaskStore, has ``start`` and ``relay``)."""
        start = getattr(self.store, "start", None)
        if start is not None:
            await start(self._relayed)

    def _relayed(self, task_id: str, operation: str, payload: Any) -> None:
        run = self.running.get(task_id)
        if run is None or run.record is None:
            return  # not ours
        if operation == "cancel":
            work: Any = self.cancel(run.record)
        elif operation == "update" and run.inputs is not None and type(payload) is dict:
            work = run.inputs.deliver(payload)
        else:
            return
        task = asyncio.get_running_loop().create_task(work)
        self._relays.add(task)
        task.add_done_callback(self._relays.discard)

    async def _relay(self, task_id: str, operation: str, payload: Any = None) -> bool:
        relay = getattr(self.store, "relay", None)
        if relay is None:
            return False
        await relay(task_id, operation, payload)
        return True

    async def cancel(self, record: TaskRecord) -> TaskRecord:
        """Cancel a task (nothing happens to an ended one); returns its record. A task
        running in another process is marked cancelled in the shared store and its owner
        is told to stop it."""
        if record.terminal:
            return record
        run = self.running.pop(record.task_id, None)
        if run is not None and run.record is not None:
            record = run.record
        record.input_requests = {}
        record.status_message = "Cancelled by the client"
        record.touch(CANCELLED)
        await self.store.put(record)
        self.changed(record)
        if run is not None:
            run.ended()
            if run.work is not None:
                run.work.cancel()
        else:
            await self._relay(record.task_id, "cancel")
        return record

    async def update(self, record: TaskRecord, responses: Any) -> None:
        """Deliver ``inputResponses`` to a task waiting on them (others are ignored)."""
        if type(responses) is not dict or any(type(value) is not dict for value in responses.values()):
            raise InvalidParams("Invalid params: inputResponses must map keys to result objects",
                                {"param": "inputResponses"})
        run = self.running.get(record.task_id)
        inputs = run.inputs if run is not None else None
        if inputs is None:
            if record.terminal:
                return
            # Running elsewhere: its owner gets the answers (acknowledged now, applied there).
            if run is None and await self._relay(record.task_id, "update", responses):
                return
            raise JSONRPCError(INTERNAL_ERROR,
                               f"Internal error: task {record.task_id!r} runs in another process",
                               {"taskId": record.task_id})
        await inputs.deliver(responses)

    async def wait_ended(self, ctx: Context, params: Any, form: str) -> TaskRecord:
        """The record once the task has ended (tasks/result blocks until then)."""
        record = await self.find(ctx, params, form)
        while not record.terminal:
            run = self.running.get(record.task_id)
            if run is not None:
                await run.done.wait()
            else:
                # Run elsewhere (a shared store): poll it.
                await asyncio.sleep((self.poll_interval_ms or DEFAULT_POLL_INTERVAL_MS) / 1000.0)
            record = await self.find(ctx, params, form)
        return record


class TaskRun:
    """One task's work in this process (module docstring): made for a tools/call that may
    become a task, it creates the record when the task starts and writes the outcome."""

    __slots__ = ("manager", "tool", "ctx", "form", "ttl_ms", "record", "answer", "work",
                 "inputs", "done", "_channel_requests")

    def __init__(self, manager: TaskManager, tool: Tool, ctx: Context, form: str,
                 ttl_ms: Optional[int]) -> None:
        self.manager = manager
        self.tool = tool
        self.ctx = ctx
        self.form = form
        self.ttl_ms = ttl_ms
        self.record: Optional[TaskRecord] = None
        # The request's answer when the function makes the task itself (task_start="handler").
        self.answer: Optional[asyncio.Future[Any]] = None
        self.work: Optional[asyncio.Task[Any]] = None
        self.inputs: Optional[TaskInputs] = None
        self.done = asyncio.Event()
        self._channel_requests = 0
        ctx.task_run = self

    async def start(self, arguments: Any) -> Any:
        """The request's answer: the CreateTaskResult, or the function's own answer when
        it finished (or asked for input) before making a task."""
        loop = asyncio.get_running_loop()
        ctx = self.ctx
        tool = self.tool

        def call() -> Any:
            return tool.call(arguments, ctx, as_task=True)

        if tool.task_start == "call":
            created = await self.create()
            self.work = loop.create_task(self.execute(call))
            return created
        answer = self.answer = loop.create_future()
        work = self.work = loop.create_task(self.execute(call))
        try:
            await asyncio.wait((work, answer), return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            if self.record is None:
                work.cancel()
            raise
        if answer.done():
            return answer.result()
        return work.result()

    async def create(self) -> dict[str, Any]:
        """Make the task: its record is stored before the client learns its id; from now
        on the function's context belongs to the task. Returns the CreateTaskResult."""
        manager = self.manager
        ctx = self.ctx
        record = TaskRecord(secrets.token_urlsafe(16), ctx.method, self.form,
                            manager.principal(ctx, self.form), self.ttl_ms,
                            manager.poll_interval_ms)
        await manager.store.put(record)
        self.record = record
        manager.running[record.task_id] = self
        ctx.progress = None
        if self.form == EXTENSION:
            self.inputs = TaskInputs(self)
            ctx.back_channel = self.inputs
            ctx.state = _quiet(ctx.state)
            return {"resultType": "task", **record.extension()}
        ctx.back_channel = RelatedTaskChannel(self, ctx.back_channel)
        return {"task": record.experimental()}

    async def escalate(self) -> bool:
        """``ctx.run_as_task()``: make the task now and answer the request with it."""
        if self.record is not None:
            return True
        created = await self.create()
        answer = self.answer
        if answer is not None and not answer.done():
            answer.set_result(created)
        return True

    async def execute(self, call: Callable[[], Any]) -> Any:
        """Run the function; before the task exists its outcome is the request's, after
        it is written to the task's record."""
        try:
            value = call()
            if inspect.isawaitable(value):
                value = await value
        except asyncio.CancelledError:
            if self.record is not None:
                await self.settle(CANCELLED)
            raise
        except JSONRPCError as exc:
            if self.record is None:
                # Not a task (yet): a tool's errors are tool results, as for any call.
                return self.tool.failed_result(exc, self.ctx)
            await self.settle(FAILED, error=error_object(exc))
            return None
        except Exception as exc:  # a bug of the server's, not of the tool: Tool catches those
            if self.record is None:
                raise
            _LOGGER.exception("task %s failed", self.record.task_id)
            await self.settle(FAILED, error={"code": INTERNAL_ERROR, "message": f"Internal error: {exc}"})
            return None
        if self.record is None:
            return value
        status = COMPLETED
        if self.form == EXPERIMENTAL and type(value) is dict and value.get("isError"):
            status = FAILED  # 2025-11-25: a tool error fails the task (its result stays)
        await self.settle(status, result=value)
        return None

    async def settle(self, status: str, result: Optional[dict[str, Any]] = None,
                     error: Optional[dict[str, Any]] = None) -> None:
        """Write the task's end (unless it has ended already: a cancelled task stays so)."""
        record = self.record
        assert record is not None
        manager = self.manager
        if record.terminal:
            return
        stored = await manager.store.get(record.task_id)
        if stored is not None and stored.terminal:
            record.status = stored.status
        else:
            record.result = result
            record.error = error
            record.input_requests = {}
            record.touch(status)
            await manager.store.put(record)
            manager.changed(record)
        manager.running.pop(record.task_id, None)
        self.ended()

    def ended(self) -> None:
        self.done.set()
        self.status_changed()

    async def question_asked(self) -> None:
        """A request to the client went out for this task: it is ``input_required`` while
        any such request waits."""
        self._channel_requests += 1
        record = self.record
        if record is not None and record.status == WORKING:
            record.touch(INPUT_REQUIRED)
            await self.persist()
            self.status_changed()

    async def question_answered(self) -> None:
        """A request to the client was answered (or failed): back to ``working`` once none
        waits."""
        self._channel_requests -= 1
        record = self.record
        if self._channel_requests == 0 and record is not None and record.status == INPUT_REQUIRED:
            record.touch(WORKING)
            await self.persist()
            self.status_changed()

    def status_changed(self) -> None:
        """2025-11-25: tell the client (notifications/tasks/status) while it is connected."""
        record = self.record
        connection = self.ctx.connection
        if self.form == EXPERIMENTAL and record is not None and connection is not None:
            connection.notify(methods.TASKS_STATUS, record.experimental())

    async def persist(self) -> None:
        """Store a change of a running task (an ended one stays as it ended)."""
        record = self.record
        if record is not None and not record.terminal:
            await self.manager.store.put(record)
            self.manager.changed(record)


class TaskInputs:
    """The back channel of a 2026-07-28 task: questions wait in ``inputRequests`` until
    ``tasks/update`` answers them (module docstring)."""

    __slots__ = ("run", "waiting", "issued", "_count")

    def __init__(self, run: TaskRun) -> None:
        self.run = run
        self.waiting: dict[str, asyncio.Future[Any]] = {}
        self.issued: set[str] = set()
        self._count = 0

    async def request(self, origin: Any, method: str, params: Any = None, *,
                      timeout: Optional[float] = None, key: Optional[str] = None) -> Any:
        self._count += 1
        key = input_key(self._count, key)
        if key in self.issued:
            # A key names one question over the task's whole life.
            key = f"{key}.{self._count}"
        self.issued.add(key)
        run = self.run
        record = run.record
        assert record is not None
        question: dict[str, Any] = {"method": method}
        if params is not None:
            question["params"] = params
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.waiting[key] = future
        record.input_requests[key] = question
        record.touch(INPUT_REQUIRED)
        await run.persist()
        try:
            if timeout is None:
                return await future
            try:
                return await asyncio.wait_for(future, timeout)
            except asyncio.TimeoutError:
                raise RequestTimeout(None, method, timeout) from None
        finally:
            self.waiting.pop(key, None)
            if record.input_requests.pop(key, None) is not None and not record.terminal:
                # Given up (timeout, cancellation) rather than answered.
                if not record.input_requests:
                    record.touch(WORKING)
                await run.persist()

    async def deliver(self, responses: dict[str, Any]) -> None:
        """Answers from tasks/update: questions still waiting get theirs, the rest is
        ignored; the record shows what is still pending before this returns."""
        answered = [key for key in responses
                    if key in self.waiting and not self.waiting[key].done()]
        if not answered:
            return
        record = self.run.record
        assert record is not None
        for key in answered:
            record.input_requests.pop(key, None)
        record.touch(INPUT_REQUIRED if record.input_requests else WORKING)
        await self.run.persist()
        for key in answered:
            self.waiting[key].set_result(responses[key])


class RelatedTaskChannel:
    """The back channel of a 2025-11-25 task: the session's requests, tagged with the
    task, the task being ``input_required`` while any is unanswered."""

    __slots__ = ("run", "inner")

    def __init__(self, run: TaskRun, inner: Any) -> None:
        self.run = run
        self.inner = inner

    async def request(self, origin: Any, method: str, params: Any = None, *,
                      timeout: Optional[float] = None, key: Optional[str] = None) -> Any:
        run = self.run
        record = run.record
        assert record is not None
        tagged = dict(params) if type(params) is dict else {}
        meta = tagged.get("_meta")
        tagged["_meta"] = {**(meta if type(meta) is dict else {}),
                           RELATED_TASK: {"taskId": record.task_id}}
        await run.question_asked()
        try:
            return await self.inner.request(origin, method, tagged, timeout=timeout, key=key)
        finally:
            await run.question_answered()
