"""mcpfast.scaleout: what several processes of one service share, kept in Redis.

Each module implements an interface whose in-process default lives with its user, and is
given to it by whoever wires the service (``Server(publisher=..., task_store=...)``, the
HTTP endpoint's ``event_store=`` / ``session_directory=``, the rate limiter's buckets; the
CLI and the worker supervisor do it for ``mcpfast run --redis``). This package sits above
the server and the transports: it may import them, and nothing below imports it.

  redis_connection.py         clients, commands with outage handling, channel subscriptions
  redis_publisher.py          RedisPublisher: the fan-out of list changes, updates, logs
  redis_task_store.py         RedisTaskStore: the records of tasks
  redis_rate_limit.py         RedisBuckets: rate-limit buckets shared by every process
  redis_event_store.py        RedisEventStore: resumable SSE streams (Last-Event-ID)
  redis_session_directory.py  RedisSessionDirectory: 2025-era HTTP sessions shared

Needs ``pip install 'mcpfast[redis]'``.
"""
