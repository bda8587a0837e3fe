"""ForwardedTasks: the upstream tasks the gateway's downstream clients made, whose they
are, and the ``tasks/*`` requests that reach them, in both task forms.

Every downstream client reaches an upstream through the gateway's one shared session, so
to the upstream all tasks belong to the gateway. This table gives each upstream task an id
of the gateway's own (128 random bits: two upstreams' ids never collide, and an upstream's
guessable ids are never shown) and keeps, per id, the upstream, the upstream's id, the
upstream session it was made on and who made it: the downstream connection (the
2025-11-25 tasks utility), or under the 2026-07-28 tasks extension the authenticated
subject (without authentication the id alone guards the task, as mcpfast's server does).
A request naming an id that is not the caller's is left to the server, which answers
-32602 (unknown task). Bounded: past ``capacity`` the oldest entries are forgotten.

The two forms, as the downstream and the upstream speak them (:func:`task_request`):

- same form on both legs: the request goes upstream with the task id mapped back, the
  answer comes back with the gateway's id; the questions a 2025-11-25 upstream asks within
  a 2025-11-25 client's task go to that client (Upstream.ask_connection), an error for
  the upstream once it has disconnected, never to another client;
- a 2026-07-28 downstream, a 2025-11-25 upstream: a call of a tool that declares
  ``execution.taskSupport`` is sent task-augmented, its CreateTaskResult given in the
  extension's flat form (``ttl``/``pollInterval`` as ``ttlMs``/``pollIntervalMs``);
  ``tasks/get`` answers the DetailedTask, the result or error of an ended task fetched
  with ``tasks/result`` and inlined (a tool error, ``failed`` under 2025-11-25, is
  ``completed`` with its ``isError`` result, as 2026-07-28 says); the questions the
  upstream asks within the task (its requests tagged with the task) wait in
  ``inputRequests`` (status ``input_required``; -32021 to the upstream when the client's
  request lacked the capability) until ``tasks/update`` answers them, answers to no
  waiting question ignored (a question asked before the CreateTaskResult is recorded waits
  for it, while such a call is in flight); ``tasks/cancel`` acknowledges, also for an
  ended task; a call of a tool that requires a task, from a client without the
  extension, gets -32021 as from a 2026-07-28 server;
- a 2026-07-28 request's legacy ``params.task`` is dropped (it means nothing there, and
  must not make a task of a 2025-11-25 upstream's tool);
- a 2025-11-25 downstream, a 2026-07-28 upstream: a task-augmented call is refused
  (-32602 naming ``params.task``): the gateway makes no extension task for a client that
  cannot follow one.

A task whose upstream restarted since it was made is gone with the old session: its
requests get -32602 saying so, and the listen streams following it get it ``failed``
(-32008 naming the upstream).

``notifications/tasks`` on ``subscriptions/listen``: a 2026-07-28 client's task is
mirrored in the gateway's own task store (a TaskRecord under the gateway's id, bound to
the caller as the server binds its own), so that the server's listen acknowledges and
follows it; each change is stored there and published (TaskManager.changed), fed by a
listen the gateway opens upstream for the task (a 2026-07-28 upstream;
Upstream.follow_task, ended with the task), or by the upstream's
``notifications/tasks/status`` and the task's questions (a 2025-11-25 upstream: its
DetailedTask read again each time). ``tasks/get`` is still answered from the upstream.
"""

from __future__ import annotations

import asyncio
import secrets
from collections import OrderedDict
from typing import Any, Awaitable, Callable, Coroutine, Optional

from mcpfast.gateway.eras import asked_capabilities
from mcpfast.jsonrpc.errors import INVALID_PARAMS, InvalidParams, JSONRPCError
from mcpfast.protocol import methods
from mcpfast.protocol.error_codes import TRANSPORT_ERROR
from mcpfast.protocol.meta_keys import RELATED_TASK
from mcpfast.server.request.requests_to_client import require_capability
from mcpfast.server.tasks.manager import error_object, missing_extension, task_form
from mcpfast.server.tasks.record import (
    COMPLETED,
    EXPERIMENTAL,
    EXTENSION,
    FAILED,
    INPUT_REQUIRED,
    TERMINAL,
    WORKING,
    TaskRecord,
)

__all__ = ["DEFAULT_TASK_CAPACITY", "EXPERIMENTAL", "EXTENSION", "NOT_ASKED", "ForwardedTask", "ForwardedTasks",
           "call_params", "downstream_form", "task_list", "task_made", "task_request"]

DEFAULT_TASK_CAPACITY = 10_000
#: The two task forms: the 2026-07-28 extension, the 2025-11-25 tasks utility.
#: What a task question's awaitable gives when the question is not the table's to ask
#: (Upstream.on_task_question): the upstream asks it as any other.
NOT_ASKED: Any = object()
# The owner of a 2026-07-28 task made without authentication (the id alone guards it).
_ANYONE = ("anyone",)
_TERMINAL = TERMINAL
_STATUSES = frozenset({WORKING, INPUT_REQUIRED}) | TERMINAL
# The requests about one task that each form defines.
_METHODS = {EXTENSION: frozenset({methods.TASKS_GET, methods.TASKS_UPDATE, methods.TASKS_CANCEL}),
            EXPERIMENTAL: frozenset({methods.TASKS_GET, methods.TASKS_RESULT, methods.TASKS_CANCEL})}
# The 2025-11-25 Task members and their 2026-07-28 names.
_RENAMED = {"ttl": "ttlMs", "pollInterval": "pollIntervalMs"}


class ForwardedTask:
    """One upstream task: its upstream, the upstream's id, the session it was made on (the
    upstream's start count then), its owner, and for a 2026-07-28 owner of a 2025-11-25
    upstream's task the request state it was made with (whose client capabilities its
    questions need) and the questions waiting for ``tasks/update``."""

    __slots__ = ("task_id", "upstream", "upstream_id", "start", "owner", "state", "questions", "asked",
                 "core", "following", "changed")

    def __init__(self, task_id: str, upstream: Any, upstream_id: str, start: int, owner: Any,
                 state: Any = None) -> None:
        self.task_id = task_id
        self.upstream = upstream
        self.upstream_id = upstream_id
        self.start = start
        self.owner = owner
        self.state = state
        self.questions: dict[str, tuple[dict[str, Any], asyncio.Future[Any]]] = {}
        self.asked = 0
        # The gateway's server whose store mirrors the task (2026-07-28 owners), the
        # upstream listen following it (a 2026-07-28 upstream), and what to call when its
        # questions change (ForwardedTasks.refresh).
        self.core: Any = None
        self.following: Any = None
        self.changed: Callable[[ForwardedTask], None] = lambda entry: None

    def stop_following(self) -> None:
        """End the upstream listen following the task, if any."""
        following, self.following = self.following, None
        if following is not None and not following.future.done():
            following.cancel("the task ended")

    def pending(self) -> dict[str, dict[str, Any]]:
        """The questions still unanswered, as ``inputRequests``."""
        return {key: question for key, (question, answer) in self.questions.items() if not answer.done()}

    def answer(self, responses: Any) -> None:
        """``tasks/update``'s ``inputResponses``: waiting questions get theirs, the rest
        is ignored (as the extension says)."""
        if type(responses) is not dict:
            return
        for key, response in responses.items():
            waiting = self.questions.get(key)
            if waiting is not None and not waiting[1].done():
                waiting[1].set_result(response)

    async def ask(self, method: str, params: Any) -> Any:
        """A question the upstream asks within the task: pending (``input_required``)
        until ``tasks/update`` answers it; -32021 when the owner's request lacked the
        capability it needs."""
        state = self.state
        for capability in asked_capabilities(method, params):  # the owner's, not the gateway's
            require_capability(state.client_capabilities or {}, state.features, capability)
        self.asked += 1
        key = f"{method.split('/', 1)[0]}_{self.asked}"
        question: dict[str, Any] = {"method": method}
        if type(params) is dict:
            meta = params.get("_meta")
            shown = {k: v for k, v in params.items() if k != "_meta"}
            if type(meta) is dict and len(meta) > 1:
                shown["_meta"] = {k: v for k, v in meta.items() if k != RELATED_TASK}
            question["params"] = shown
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.questions[key] = (question, answer)
        self.changed(self)
        try:
            return await answer
        finally:
            del self.questions[key]


def _same(owner: Any, other: Any) -> bool:
    # Connections by identity, subjects (tuples) by value.
    return owner is other or (type(owner) is tuple and owner == other)


class ForwardedTasks:
    """Gateway task id -> ForwardedTask (module docstring)."""

    def __init__(self, capacity: int = DEFAULT_TASK_CAPACITY) -> None:
        self.capacity = capacity
        self._tasks: OrderedDict[str, ForwardedTask] = OrderedDict()
        self._ids: dict[tuple[Any, str], str] = {}
        # Questions of tasks not recorded yet: (upstream, upstream id) -> the gateway's id.
        self._awaited: dict[tuple[Any, str], asyncio.Future[str]] = {}
        # Upstream -> its task-augmented calls for 2026-07-28 clients in flight.
        self._expecting: dict[Any, int] = {}
        # The status updates being stored and published (asyncio keeps weak references).
        self._updates: set[asyncio.Task[None]] = set()

    def __len__(self) -> int:
        return len(self._tasks)

    def record(self, upstream: Any, upstream_id: str, owner: Any, state: Any = None) -> str:
        """Remember an upstream task made for ``owner`` (by a request of ``state``); return
        the gateway's id of it."""
        task_id = secrets.token_urlsafe(16)
        entry = self._tasks[task_id] = ForwardedTask(task_id, upstream, upstream_id, upstream.starts, owner, state)
        entry.changed = self.refresh
        self._ids[(upstream, upstream_id)] = task_id
        awaited = self._awaited.pop((upstream, upstream_id), None)
        if awaited is not None and not awaited.done():
            awaited.set_result(task_id)
        while len(self._tasks) > self.capacity:
            _, dropped = self._tasks.popitem(last=False)
            self._ids.pop((dropped.upstream, dropped.upstream_id), None)
            dropped.stop_following()
        return task_id

    def entry(self, task_id: str) -> ForwardedTask:
        """The task of a gateway id this table gave (KeyError when forgotten)."""
        return self._tasks[task_id]

    def find(self, task_id: Any, owner: Any) -> Optional[ForwardedTask]:
        """The task ``task_id`` when ``owner`` made it, else None."""
        entry = self._tasks.get(task_id) if isinstance(task_id, str) else None
        if entry is None or not _same(entry.owner, owner):
            return None
        return entry

    def downstream_id(self, upstream: Any, upstream_id: Any) -> Optional[tuple[str, Any]]:
        """The gateway's id of an upstream's task and its owner (None when unknown)."""
        task_id = self._ids.get((upstream, upstream_id)) if isinstance(upstream_id, str) else None
        return None if task_id is None else (task_id, self._tasks[task_id].owner)

    def owned(self, owner: Any, upstream: Any) -> dict[str, str]:
        """``owner``'s tasks on ``upstream``: upstream id -> gateway id."""
        return {entry.upstream_id: task_id for task_id, entry in self._tasks.items()
                if entry.upstream is upstream and _same(entry.owner, owner)}

    def forget_owner(self, owner: Any) -> None:
        """Drop the tasks of a connection that closed."""
        for task_id in [task_id for task_id, entry in self._tasks.items() if _same(entry.owner, owner)]:
            entry = self._tasks.pop(task_id)
            self._ids.pop((entry.upstream, entry.upstream_id), None)
            entry.stop_following()

    def upstreams_of(self, owner: Any) -> list[Any]:
        """The upstreams running ``owner``'s tasks, in the order first made."""
        seen: dict[Any, None] = {}
        for entry in self._tasks.values():
            if _same(entry.owner, owner):
                seen.setdefault(entry.upstream, None)
        return list(seen)

    def question(self, upstream: Any, method: str, params: Any) -> Optional[Awaitable[Any]]:
        """A question an upstream asks within a task (``_meta`` related-task), for the
        task's owner only: the awaitable of its answer -- for a 2026-07-28 client's task of
        a 2025-11-25 upstream, which ``tasks/update`` brings; for a 2025-11-25 client's,
        asked on the owner's connection (Upstream.ask_connection; an error when it has
        closed) -- or of NOT_ASKED when no recorded task turns out to be its; None for a
        question of no task the table knows (Upstream.on_task_question)."""
        meta = params.get("_meta") if type(params) is dict else None
        related = meta.get(RELATED_TASK) if type(meta) is dict else None
        upstream_id = related.get("taskId") if type(related) is dict else None
        if not isinstance(upstream_id, str):
            return None
        task_id = self._ids.get((upstream, upstream_id))
        if task_id is not None:
            return self._ask_owner(self._tasks[task_id], method, params)
        if not self._expecting.get(upstream):
            return None
        # The task asks before its CreateTaskResult has been recorded (its function starts
        # at once), while a task-augmented call waits for one: the question waits for the
        # record.
        return self._ask_when_recorded(upstream, upstream_id, method, params)

    def _ask_owner(self, entry: ForwardedTask, method: str, params: Any) -> Optional[Awaitable[Any]]:
        if entry.state is not None:
            return entry.ask(method, params)
        if type(entry.owner) is tuple:
            return None  # a 2026-07-28 upstream's task: its questions never come this way
        return entry.upstream.ask_connection(entry.owner, method, params,
                                             f"the client that made task {entry.task_id!r}")

    async def expecting(self, upstream: Any, call: Awaitable[Any]) -> Any:
        """Await ``call``, a tools/call sent task-augmented to ``upstream``: meanwhile the
        questions of tasks not recorded yet wait for their record."""
        self._expecting[upstream] = self._expecting.get(upstream, 0) + 1
        try:
            return await call
        finally:
            left = self._expecting[upstream] - 1
            if left:
                self._expecting[upstream] = left
            else:
                del self._expecting[upstream]

    async def _ask_when_recorded(self, upstream: Any, upstream_id: str, method: str, params: Any) -> Any:
        key = (upstream, upstream_id)
        recorded = self._awaited.get(key)
        if recorded is None:
            recorded = self._awaited[key] = asyncio.get_running_loop().create_future()
        timeout = upstream.options.timeout
        try:
            task_id = await asyncio.wait_for(asyncio.shield(recorded), timeout)
        except asyncio.TimeoutError:
            return NOT_ASKED  # never recorded (its call was cancelled): asked as before
        finally:
            if self._awaited.get(key) is recorded and not recorded.done():
                del self._awaited[key]
        entry = self._tasks.get(task_id)
        asked = None if entry is None else self._ask_owner(entry, method, params)
        return NOT_ASKED if asked is None else await asked

    def status_note(self, upstream: Any, params: Any) -> Optional[tuple[Any, dict[str, Any]]]:
        """An upstream's ``notifications/tasks/status``: the connection to tell and the
        params with the gateway's id (None for a task no downstream client made)."""
        found = self.downstream_id(upstream, params.get("taskId") if isinstance(params, dict) else None)
        if found is None:
            return None
        if type(found[1]) is tuple:
            self.refresh(self._tasks[found[0]])  # a 2026-07-28 client's: its listen streams
            return None
        return found[1], {**params, "taskId": found[0]}

    # -- notifications/tasks for the downstream's subscriptions/listen -------------------

    def refresh(self, entry: ForwardedTask) -> None:
        """A 2025-11-25 upstream's task of a 2026-07-28 client changed: its DetailedTask is
        read again, stored in the mirror and published."""
        if entry.core is not None:
            self._spawn(_refreshed(entry))

    def task_note(self, upstream: Any, params: Any) -> None:
        """``notifications/tasks`` from the listen following a 2026-07-28 upstream's task
        (Upstream.on_task_note): stored in the mirror and published under the gateway's id."""
        found = self.downstream_id(upstream, params.get("taskId") if isinstance(params, dict) else None)
        if found is None:
            return
        entry = self._tasks[found[0]]
        detailed = {key: value for key, value in params.items() if key != "_meta"}
        self._spawn(_published(entry, {**detailed, "taskId": entry.task_id}))

    def upstream_restarted(self, upstream: Any) -> None:
        """A new session of ``upstream``: the tasks of the old ones are gone, and the
        listen streams following them are told so (failed)."""
        for entry in self._tasks.values():
            if entry.upstream is upstream and entry.start != upstream.starts and entry.core is not None:
                entry.stop_following()
                self._spawn(_published(entry, {"taskId": entry.task_id, "status": FAILED, "error": {
                    "code": TRANSPORT_ERROR, "message": f"upstream {upstream.key!r} restarted: the task is gone",
                    "data": {"upstream": upstream.key}}}))

    def _spawn(self, update: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(update)
        self._updates.add(task)
        task.add_done_callback(self._updates.discard)


# -- the forms of a request ------------------------------------------------------------


def downstream_form(ctx: Any) -> Optional[str]:
    """The task form the downstream request may use (None: no tasks)."""
    return task_form(ctx.state)


def _upstream_form(upstream: Any) -> str:
    client = upstream.client
    return EXTENSION if client is not None and client.discover_result is not None else EXPERIMENTAL


def _owner(ctx: Any, form: str) -> Any:
    if form == EXPERIMENTAL:
        return ctx.connection
    auth = ctx.auth
    return ("subject", auth.subject) if auth is not None else _ANYONE


def call_params(ctx: Any, params: dict[str, Any], listed: dict[str, Any], upstream: Any,
                forwarded: dict[str, Any]) -> dict[str, Any]:
    """The params of a tools/call for the upstream, task-augmented or refused across the
    two forms (module docstring)."""
    upstream_form = _upstream_form(upstream)
    if ctx.state.features.stateless:
        # Under 2026-07-28 a legacy params.task means nothing (the extension decides): it
        # must not make a task of a 2025-11-25 upstream's tool.
        out = {key: value for key, value in forwarded.items() if key != "task"} \
            if "task" in forwarded else forwarded
        if upstream_form == EXPERIMENTAL:
            execution = listed.get("execution")
            support = execution.get("taskSupport") if isinstance(execution, dict) else None
            if support in ("optional", "required"):
                if downstream_form(ctx) == EXTENSION:
                    out = {**out, "task": {}}
                elif support == "required":
                    # As a 2026-07-28 server refuses it (the upstream would say -32601).
                    raise missing_extension(f"the tool {params.get('name')!r}")
        return out
    if "task" in params and upstream_form == EXTENSION:
        raise InvalidParams(
            f"Invalid params: params.task: upstream {upstream.key!r} speaks 2026-07-28, whose "
            "tasks (the io.modelcontextprotocol/tasks extension) the gateway does not turn into "
            "2025-11-25 ones; call the tool without params.task",
            {"param": "task", "upstream": upstream.key})
    return forwarded


def _extension_task(task: dict[str, Any], task_id: str) -> dict[str, Any]:
    # A 2025-11-25 Task in the 2026-07-28 form (module docstring).
    out = {_RENAMED.get(key, key): value for key, value in task.items()}
    out["taskId"] = task_id
    if out.get("status") == "input_required":
        out["status"] = "working"
    return out


async def task_made(tasks: ForwardedTasks, ctx: Any, sent: dict[str, Any], upstream: Any,
                    result: Any) -> Optional[dict[str, Any]]:
    """The CreateTaskResult of an upstream's answer to the tools/call ``sent`` to it,
    recorded and with the gateway's id, in the downstream's form; None when the answer is
    no task."""
    if type(result) is not dict:
        return None
    form = downstream_form(ctx)
    if form == EXTENSION and result.get("resultType") == "task" and isinstance(result.get("taskId"), str):
        made = {**result, "taskId": tasks.record(upstream, result["taskId"], _owner(ctx, form))}
        entry = tasks.entry(made["taskId"])
        await _mirror(entry, ctx, made)
        entry.following = upstream.follow_task(entry.upstream_id, ctx)
        return made
    task = result.get("task")
    if form is None or type(task) is not dict or not isinstance(task.get("taskId"), str):
        return None
    if "task" not in sent:
        return None  # a 2025-11-25 task answers only a task-augmented call
    if form == EXTENSION:
        task_id = tasks.record(upstream, task["taskId"], _owner(ctx, form), ctx.state)
        made = {"resultType": "task", **_extension_task(task, task_id)}
        await _mirror(tasks.entry(task_id), ctx, made)
        return made
    task_id = tasks.record(upstream, task["taskId"], _owner(ctx, form))
    return {**result, "task": {**task, "taskId": task_id}}


# -- tasks/get, tasks/result, tasks/update, tasks/cancel, tasks/list ---------------------


async def task_request(tasks: ForwardedTasks, ctx: Any, call_next: Callable[[Any], Awaitable[Any]],
                       forwarded: dict[str, Any]) -> Any:
    """A ``tasks/*`` request naming a task an upstream runs for this caller, sent there in
    the upstream's form; anything else to the server itself (module docstring).
    ``forwarded``: the request's params as any forwarded request's (routing)."""
    form = downstream_form(ctx)
    if form is None or ctx.method not in _METHODS[form]:
        return await call_next(ctx)  # the server refuses what the form does not define
    task_id = forwarded.get("taskId")
    entry = tasks.find(task_id, _owner(ctx, form)) if isinstance(task_id, str) else None
    if entry is None or not isinstance(task_id, str):
        return await call_next(ctx)  # the server answers -32602 (unknown task)
    upstream = entry.upstream
    if upstream.starts != entry.start:
        raise InvalidParams(f"Invalid params: task {task_id!r} is gone: upstream {upstream.key!r} "
                            "restarted since it was made", {"taskId": task_id, "upstream": upstream.key})
    method = ctx.method
    sent = {**forwarded, "taskId": entry.upstream_id}
    if form == EXTENSION and _upstream_form(upstream) == EXPERIMENTAL:
        return await _across(entry, method, sent, ctx, task_id)
    # tasks/result waits for the task's end, which may be long after any call timeout.
    result = await upstream.request(method, sent, origin=ctx, wait=method == methods.TASKS_RESULT)
    if type(result) is not dict:
        return result
    if method == methods.TASKS_RESULT:
        meta = result.get("_meta")
        if type(meta) is dict and RELATED_TASK in meta:
            return {**result, "_meta": {**meta, RELATED_TASK: {"taskId": task_id}}}
        return result
    return {**result, "taskId": task_id} if "taskId" in result else result


async def _across(entry: ForwardedTask, method: str, sent: dict[str, Any], ctx: Any, task_id: str) -> Any:
    # A 2026-07-28 request about a task of a 2025-11-25 upstream (module docstring).
    upstream = entry.upstream
    if method == methods.TASKS_GET:
        task = await upstream.request(methods.TASKS_GET, sent, origin=ctx)
        detailed = _extension_task(task, task_id)
        if task.get("status") not in ("completed", "failed"):
            pending = entry.pending()
            if pending:
                return {**detailed, "status": "input_required", "inputRequests": pending}
            return detailed
        try:
            result = await upstream.request(methods.TASKS_RESULT, sent, origin=ctx, wait=True)
        except JSONRPCError as exc:
            return {**detailed, "status": "failed", "error": error_object(exc)}
        if type(result) is dict and type(result.get("_meta")) is dict:
            meta = {key: value for key, value in result["_meta"].items() if key != RELATED_TASK}
            result = {key: value for key, value in result.items() if key != "_meta"}
            if meta:
                result["_meta"] = meta
        return {**detailed, "status": "completed", "result": result}
    if method == methods.TASKS_CANCEL:
        try:
            await upstream.request(methods.TASKS_CANCEL, sent, origin=ctx)
        except JSONRPCError as exc:
            # 2025-11-25 refuses to cancel an ended task; 2026-07-28 acknowledges it.
            if exc.code != INVALID_PARAMS:
                raise
            task = await upstream.request(methods.TASKS_GET, sent, origin=ctx)
            if task.get("status") not in _TERMINAL:
                raise
        return {}
    # tasks/update, the one other request of the extension (_METHODS): the answers go to
    # the questions waiting, the rest is ignored; acknowledged.
    await upstream.request(methods.TASKS_GET, sent, origin=ctx)  # the task is still there
    entry.answer(sent.get("inputResponses"))
    return {}


async def task_list(tasks: ForwardedTasks, ctx: Any, result: Any) -> Any:
    """A 2025-11-25 ``tasks/list`` answer (its last page) with the caller's upstream tasks
    after the server's own, under the gateway's ids."""
    if downstream_form(ctx) != EXPERIMENTAL or not isinstance(result, dict) or result.get("nextCursor"):
        return result
    listed_tasks = list(result.get("tasks", ()))
    owner = ctx.connection
    for upstream in tasks.upstreams_of(owner):
        owned = tasks.owned(owner, upstream)
        if not owned:
            continue
        listed = await upstream.request(methods.TASKS_LIST, {}, origin=ctx)
        listed_tasks += [{**task, "taskId": owned[task["taskId"]]} for task in listed.get("tasks", ())
                         if isinstance(task, dict) and task.get("taskId") in owned]
    return {**result, "tasks": listed_tasks}



# -- the mirror: what subscriptions/listen follows ------------------------------------


async def _mirror(entry: ForwardedTask, ctx: Any, created: dict[str, Any]) -> None:
    # A 2026-07-28 client's task, in the gateway's own task store, so that its server's
    # subscriptions/listen acknowledges and follows the id as one of its own; kept up to
    # date from the upstream (_published).
    core = ctx.core
    manager = core.tasks
    ttl, poll, status = created.get("ttlMs"), created.get("pollIntervalMs"), created.get("status")
    record = TaskRecord(task_id=entry.task_id, method=methods.TOOLS_CALL, form=EXTENSION,
                        principal=manager.principal(ctx, EXTENSION),
                        ttl_ms=ttl if type(ttl) is int else None, poll_interval_ms=poll if type(poll) is int else None,
                        status=status if isinstance(status, str) and status in _STATUSES else WORKING)
    await manager.store.put(record)
    entry.core = core


async def _published(entry: ForwardedTask, detailed: dict[str, Any]) -> None:
    # The task's DetailedTask now (the gateway's id): into the mirror, and to the listen
    # streams following it when it changed.
    core = entry.core
    status = detailed.get("status")
    if core is None or status not in _STATUSES:
        return
    manager = core.tasks
    record = await manager.store.get(entry.task_id)
    if record is None or record.terminal:
        return
    before = record.detailed()
    record.status = status
    message = detailed.get("statusMessage")
    record.status_message = message if isinstance(message, str) else None
    requests = detailed.get("inputRequests")
    record.input_requests = dict(requests) if status == INPUT_REQUIRED and type(requests) is dict else {}
    result, error = detailed.get("result"), detailed.get("error")
    record.result = result if status == COMPLETED and type(result) is dict else None
    record.error = error if status == FAILED and type(error) is dict else None
    if record.detailed() == before:
        return  # nothing new
    record.touch(status)
    await manager.store.put(record)
    manager.changed(record)
    if record.terminal:
        entry.stop_following()


async def _refreshed(entry: ForwardedTask) -> None:
    try:
        detailed = await _across(entry, methods.TASKS_GET, {"taskId": entry.upstream_id}, None, entry.task_id)
    except JSONRPCError:
        return  # the upstream forgot it or is gone: tasks/get says so to whoever asks
    await _published(entry, detailed)
