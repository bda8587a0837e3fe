"""Tasks shared by the processes of a deployment: :class:`RedisTaskStore`.

With ``mcpfast run ... --redis URL`` (or ``Server(task_store=RedisTaskStore(url))``) a
task's record lives in Redis, so ``tasks/get`` (and ``tasks/result`` / ``tasks/list``
under 2025-11-25) answer on any process; the work itself runs in the process that created
the task. ``tasks/cancel`` and ``tasks/update`` reaching another process are relayed to
the owner over a pub/sub channel: the owner cancels the work, or hands the answers to the
questions the task waits on. Both are acknowledged at once, as the tasks extension allows
(eventually consistent): the record shows the effect once the owner applied it. A record
is written before the client learns the task's id (Redis answers the write first), so a
``tasks/get`` sent at once finds it on every process.

Keys: ``<prefix>task:<id>`` holds a record as JSON, expiring with the task's TTL;
``<prefix>tasks:<principal>`` indexes a principal's tasks by creation time (for
``tasks/list``). Redis out of reach: ``start()`` raises RedisUnavailable; at run time a
request that needs a record fails with -32603 "the task store is out of reach" (logged
with the reason). Every record command is
idempotent (SET of a given record, ZADD NX, reads, ZREM), so one whose connection broke is
run again on a fresh one; the relay's PUBLISH is not (a second cancel or set of answers
would reach the owner). Needs the ``redis`` package (``pip install 'mcpfast[redis]'``).
"""

from __future__ import annotations

import json
import logging
import math
import time
from functools import partial
from typing import Any, Callable, Optional

from mcpfast.jsonrpc.errors import INTERNAL_ERROR, InvalidParams, JSONRPCError
from mcpfast.scaleout.redis_connection import (
    ChannelSubscription,
    RedisUnavailable,
    close_redis,
    command,
    redis_client,
    safe_url,
    subscribe,
)
from mcpfast.server.tasks.record import TaskRecord

__all__ = ["RedisTaskStore"]

_LOGGER = logging.getLogger("mcpfast.server")
DEFAULT_PREFIX = "mcpfast:"
# Kept when a record has no TTL (the store must not grow without end either).
UNLIMITED_TTL_SECONDS = 7 * 24 * 3600

Relayed = Callable[[str, str, Any], None]


class RedisTaskStore:
    """Task records in Redis, and the relay of cancel/update to a task's owner (module
    docstring). ``url``: ``redis://[:password@]host:port/db``; ``prefix``: of every key
    and of the relay channel (one per deployment)."""

    def __init__(self, url: str, prefix: str = DEFAULT_PREFIX) -> None:
        self._redis: Any = redis_client(url, "RedisTaskStore")
        self.url = url
        self.prefix = prefix
        self.channel = f"{prefix}task-relay"
        self._on_relay: Optional[Relayed] = None
        self._subscription: Optional[ChannelSubscription] = None

    def __repr__(self) -> str:
        return f"<RedisTaskStore {safe_url(self.url)} prefix={self.prefix!r}>"

    # -- TaskStore ---------------------------------------------------------------------

    def _key(self, task_id: str) -> str:
        return f"{self.prefix}task:{task_id}"

    def _index(self, principal: Optional[str]) -> str:
        return f"{self.prefix}tasks:{principal or ''}"

    async def _run(self, operation: Callable[[], Any], idempotent: bool = True) -> Any:
        try:
            return await command(operation, self.url, idempotent=idempotent)
        except RedisUnavailable as exc:
            # The request fails with a reason (not a bare "Internal error"); the URL is
            # the operator's, for the log.
            _LOGGER.warning("RedisTaskStore: %s", exc)
            raise JSONRPCError(INTERNAL_ERROR, "Internal error: the task store is out of reach") from None

    async def put(self, record: TaskRecord) -> None:
        expires = record.expires_at()
        seconds = UNLIMITED_TTL_SECONDS if expires is None else max(1, math.ceil(expires - time.time()))

        async def write() -> None:
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.set(self._key(record.task_id), json.dumps(record.to_json(), separators=(",", ":")),
                         ex=seconds)
                if record.principal is not None:
                    index = self._index(record.principal)
                    pipe.zadd(index, {record.task_id: record.created_at}, nx=True)
                    pipe.expire(index, UNLIMITED_TTL_SECONDS)
                await pipe.execute()

        await self._run(write)

    async def get(self, task_id: str) -> Optional[TaskRecord]:
        data = await self._run(lambda: self._redis.get(self._key(task_id)))
        return None if data is None else TaskRecord.from_json(json.loads(data))

    async def list(self, principal: Optional[str], cursor: Optional[str],
                   limit: int) -> tuple[list[TaskRecord], Optional[str]]:
        redis = self._redis
        index = self._index(principal)
        start = 0
        if cursor is not None:
            if type(cursor) is not str:
                raise InvalidParams("Invalid params: the cursor must be a string", {"param": "cursor"})
            rank = await self._run(lambda: redis.zrank(index, cursor))
            if rank is None:
                raise InvalidParams("Invalid params: the cursor is not valid (any more)", {"param": "cursor"})
            start = rank + 1
        records: list[TaskRecord] = []
        position = start
        while len(records) < limit:
            ids = await self._run(partial(redis.zrange, index, position, position + limit - 1))
            if not ids:
                break
            position += len(ids)
            values = await self._run(partial(redis.mget, [self._key(i.decode()) for i in ids]))
            gone = []
            for task_id, data in zip(ids, values):
                if data is None:
                    gone.append(task_id)  # expired: drop it from the index too
                elif len(records) < limit:
                    records.append(TaskRecord.from_json(json.loads(data)))
            if gone:
                await self._run(partial(redis.zrem, index, *gone))
                position -= len(gone)
        more = len(records) == limit and await self._run(lambda: redis.zcard(index)) > position
        return records, (records[-1].task_id if more and records else None)

    # -- relay to a task's owner -------------------------------------------------------

    async def relay(self, task_id: str, operation: str, payload: Any = None) -> None:
        """Ask the process running ``task_id`` to apply ``operation`` ("cancel", "update")."""
        message = json.dumps({"id": task_id, "op": operation, "payload": payload}, separators=(",", ":"))
        await self._run(lambda: self._redis.publish(self.channel, message), idempotent=False)

    async def start(self, on_relay: Relayed) -> None:
        """Connect and listen for relayed operations (RedisUnavailable when Redis cannot be
        reached); ``on_relay(task_id, operation, payload)`` applies one locally."""
        if self._subscription is not None:
            return
        self._on_relay = on_relay
        self._subscription = await subscribe(self.url, self.channel, self._arrived, "RedisTaskStore")

    def _arrived(self, data: Any) -> None:
        try:
            message = json.loads(data)
            task_id, operation, payload = message["id"], message["op"], message.get("payload")
        except (ValueError, KeyError, TypeError):
            _LOGGER.warning("RedisTaskStore: ignored a malformed relay message")
            return
        if self._on_relay is not None:
            self._on_relay(task_id, operation, payload)

    async def close(self) -> None:
        subscription, self._subscription = self._subscription, None
        await close_redis((), subscription, self._redis)
