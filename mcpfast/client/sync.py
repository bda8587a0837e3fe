"""A blocking client for scripts: ``mcpfast.connect_sync(...)``.

    with mcpfast.connect_sync(["python", "server.py"]) as client:
        print(client.call_tool("add", {"a": 1, "b": 2}))
        for tool in client.list_tools():
            print(tool["name"])

:func:`connect_sync` takes what :func:`mcpfast.connect` takes. It starts one background
thread running its own event loop (uvloop when installed), connects there, and returns a
:class:`SyncClient` whose methods mirror :class:`~mcpfast.client.Client`'s, blocking until
the result is in. Every callback (sampling, elicitation, roots functions, notification and
progress callbacks) runs on that background thread, so it must not call the SyncClient
itself (that would wait for the thread it runs on; RuntimeError). Interrupting a blocking
call (KeyboardInterrupt) cancels the request, which sends the server
``notifications/cancelled``. ``close()`` (or leaving the ``with`` block) closes the
connection and stops the thread.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Awaitable, Callable, Iterator, Mapping, Optional, Sequence, TypeVar

from mcpfast.client.client import Client
from mcpfast.client.connect import connect
from mcpfast.client.subscriptions import Subscription

__all__ = ["SyncClient", "SyncSubscription", "connect_sync"]

T = TypeVar("T")


class LoopThread:
    """An event loop running forever on a daemon thread; ``run`` blocks on a coroutine."""

    def __init__(self, name: str = "mcpfast-client") -> None:
        from mcpfast.transports import new_event_loop

        self.loop = new_event_loop()
        self._stopped = False
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()

    def _main(self) -> None:
        loop = self.loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_forever()
        finally:
            try:
                tasks = asyncio.all_tasks(loop)
                for task in tasks:
                    task.cancel()
                if tasks:
                    loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                asyncio.set_event_loop(None)
                loop.close()

    @property
    def running(self) -> bool:
        return not self._stopped and self._thread.is_alive()

    def run(self, awaitable: Awaitable[T]) -> T:
        """Run awaitable on the loop and wait for its result (or exception)."""
        if threading.current_thread() is self._thread:
            if asyncio.iscoroutine(awaitable):
                awaitable.close()
            raise RuntimeError(
                "a SyncClient method was called from its own event loop thread (from a "
                "callback?); use the async Client (SyncClient.client) there"
            )
        if not self.running:
            if asyncio.iscoroutine(awaitable):
                awaitable.close()
            raise RuntimeError("the client's event loop thread has stopped (closed client)")

        if asyncio.iscoroutine(awaitable):
            coroutine = awaitable
        else:
            async def wrapper() -> T:
                return await awaitable

            coroutine = wrapper()
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        try:
            return future.result()
        except BaseException:
            # Interrupted (KeyboardInterrupt) or failed: make sure the task is cancelled
            # (a cancelled request tells the server with notifications/cancelled).
            future.cancel()
            raise

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Call a plain function on the loop's thread and return its result."""

        async def wrapper() -> T:
            return fn(*args)

        return self.run(wrapper())

    def stop(self) -> None:
        """Stop the loop and wait for the thread to end (idempotent)."""
        if self._stopped:
            return
        self._stopped = True
        if self._thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            if threading.current_thread() is not self._thread:
                self._thread.join()


class SyncSubscription:
    """A blocking view of a :class:`Subscription`: iterate it for update params."""

    def __init__(self, subscription: Subscription, runner: LoopThread) -> None:
        self.subscription = subscription
        self._runner = runner

    @property
    def uri(self) -> str:
        return self.subscription.uri

    @property
    def active(self) -> bool:
        return self.subscription.active

    def __iter__(self) -> Iterator[dict]:
        return self

    def __next__(self) -> dict:
        try:
            return self._runner.run(self.subscription.__anext__())
        except StopAsyncIteration:
            raise StopIteration from None

    def unsubscribe(self) -> None:
        """Stop the subscription (resources/unsubscribe when it was the URI's last)."""
        self._runner.run(self.subscription.unsubscribe())

    def __enter__(self) -> SyncSubscription:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        if self.subscription.active and self._runner.running:
            self.unsubscribe()

    def __repr__(self) -> str:
        return f"<SyncSubscription {self.subscription!r}>"


class SyncClient:
    """Blocking methods over a :class:`Client` living on a background loop (module docstring).

    ``client`` is the async Client (use it only from callbacks, which run on its loop).
    """

    def __init__(self, client: Client, runner: LoopThread) -> None:
        self.client = client
        self._runner = runner

    def __repr__(self) -> str:
        return f"<SyncClient {self.client!r}>"

    # -- state ---------------------------------------------------------------------------

    @property
    def protocol_version(self) -> Optional[str]:
        return self.client.protocol_version

    @property
    def server_info(self) -> dict:
        return self.client.server_info

    @property
    def server_capabilities(self) -> dict:
        return self.client.server_capabilities

    @property
    def instructions(self) -> Optional[str]:
        return self.client.instructions

    @property
    def initialize_result(self) -> Optional[dict]:
        return self.client.initialize_result

    @property
    def closed(self) -> bool:
        return self.client.closed or not self._runner.running

    def close(self) -> None:
        """Close the connection and stop the background thread (idempotent)."""
        if self._runner.running:
            try:
                self._runner.run(self.client.aclose())
            finally:
                self._runner.stop()

    def __enter__(self) -> SyncClient:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    # -- requests (see Client for each) ----------------------------------------------------

    def request(self, method: str, params: Any = None, *, timeout: Optional[float] = None,
                progress: Optional[Callable[..., Any]] = None) -> Any:
        return self._runner.run(self.client.request(method, params, timeout=timeout,
                                                    progress=progress))

    def notify(self, method: str, params: Any = None) -> None:
        self._runner.call(self.client.notify, method, params)

    def ping(self, *, timeout: Optional[float] = None) -> None:
        self._runner.run(self.client.ping(timeout=timeout))

    def call_tool(self, name: str, arguments: Optional[Mapping[str, Any]] = None, *,
                  timeout: Optional[float] = None, progress: Optional[Callable[..., Any]] = None,
                  meta: Optional[Mapping[str, Any]] = None) -> dict:
        return self._runner.run(self.client.call_tool(name, arguments, timeout=timeout,
                                                      progress=progress, meta=meta))

    def list_tools(self, *, timeout: Optional[float] = None) -> list:
        return self._runner.run(self.client.list_tools(timeout=timeout))

    def list_tools_page(self, cursor: Optional[str] = None, *,
                        timeout: Optional[float] = None) -> dict:
        return self._runner.run(self.client.list_tools_page(cursor, timeout=timeout))

    def list_resources(self, *, timeout: Optional[float] = None) -> list:
        return self._runner.run(self.client.list_resources(timeout=timeout))

    def list_resources_page(self, cursor: Optional[str] = None, *,
                            timeout: Optional[float] = None) -> dict:
        return self._runner.run(self.client.list_resources_page(cursor, timeout=timeout))

    def list_resource_templates(self, *, timeout: Optional[float] = None) -> list:
        return self._runner.run(self.client.list_resource_templates(timeout=timeout))

    def list_resource_templates_page(self, cursor: Optional[str] = None, *,
                                     timeout: Optional[float] = None) -> dict:
        return self._runner.run(self.client.list_resource_templates_page(cursor, timeout=timeout))

    def read_resource(self, uri: str, *, timeout: Optional[float] = None,
                      progress: Optional[Callable[..., Any]] = None) -> dict:
        return self._runner.run(self.client.read_resource(uri, timeout=timeout, progress=progress))

    def subscribe(self, uri: str, callback: Optional[Callable[[dict], Any]] = None, *,
                  timeout: Optional[float] = None) -> SyncSubscription:
        subscription = self._runner.run(self.client.subscribe(uri, callback, timeout=timeout))
        return SyncSubscription(subscription, self._runner)

    def unsubscribe(self, uri: str, *, timeout: Optional[float] = None) -> None:
        self._runner.run(self.client.unsubscribe(uri, timeout=timeout))

    def list_prompts(self, *, timeout: Optional[float] = None) -> list:
        return self._runner.run(self.client.list_prompts(timeout=timeout))

    def list_prompts_page(self, cursor: Optional[str] = None, *,
                          timeout: Optional[float] = None) -> dict:
        return self._runner.run(self.client.list_prompts_page(cursor, timeout=timeout))

    def get_prompt(self, name: str, arguments: Optional[Mapping[str, str]] = None, *,
                   timeout: Optional[float] = None,
                   progress: Optional[Callable[..., Any]] = None) -> dict:
        return self._runner.run(self.client.get_prompt(name, arguments, timeout=timeout,
                                                       progress=progress))

    def complete(self, argument: str, value: str, *, prompt: Optional[str] = None,
                 resource: Optional[str] = None, context: Optional[Mapping[str, str]] = None,
                 timeout: Optional[float] = None) -> dict:
        return self._runner.run(self.client.complete(
            argument, value, prompt=prompt, resource=resource, context=context, timeout=timeout))

    def set_logging_level(self, level: str, *, timeout: Optional[float] = None) -> None:
        self._runner.run(self.client.set_logging_level(level, timeout=timeout))

    # -- roots and callbacks -------------------------------------------------------------

    def set_roots(self, roots: Any) -> None:
        self._runner.call(self.client.set_roots, roots)

    def notify_roots_changed(self) -> bool:
        return self._runner.call(self.client.notify_roots_changed)

    def on_notification(self, method: str, callback: Optional[Callable[[dict], Any]] = None) -> Any:
        if callback is None:
            return lambda fn: self._runner.call(self.client.on_notification, method, fn)
        return self._runner.call(self.client.on_notification, method, callback)

    def on_log(self, callback: Callable[[dict], Any]) -> Callable[[dict], Any]:
        return self._runner.call(self.client.on_log, callback)

    def on_list_changed(self, callback: Callable[[str], Any]) -> Callable[[str], Any]:
        return self._runner.call(self.client.on_list_changed, callback)

    def on_resource_updated(self, callback: Callable[[dict], Any]) -> Callable[[dict], Any]:
        return self._runner.call(self.client.on_resource_updated, callback)


def connect_sync(target: Any, args: Optional[Sequence[str]] = None, **options: Any) -> SyncClient:
    """Connect and initialize on a background loop; returns a blocking :class:`SyncClient`.

    Takes what :func:`mcpfast.connect` takes and raises what it raises.
    """
    runner = LoopThread()

    async def open_client() -> Client:
        return await connect(target, args, **options)

    try:
        client = runner.run(open_client())
    except BaseException:
        runner.stop()
        raise
    return SyncClient(client, runner)
