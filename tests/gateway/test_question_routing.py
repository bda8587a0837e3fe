"""Which downstream client the gateway puts an upstream's question to: the client of the
call the question belongs to -- over a Streamable HTTP upstream, the call on whose POST
stream it came; for a question of a 2025-11-25 task, the task's owner -- never the client
that happened to call last."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path
from typing import Optional

import mcpfast
from mcpfast import Context, Server

sys.path.insert(0, str(Path(__file__).parent))
from loop import eventually  # noqa: E402

NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}}


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, 60))


def asking_app(gates: dict[str, asyncio.Event], started: list[str]) -> Server:
    """An upstream whose ``ask`` tool waits for its label's gate, then elicits a name and
    samples, and answers with what the client said."""
    app = Server("asker")

    @app.tool()
    async def ask(label: str, ctx: Context) -> dict:
        """Ask the client for a name and a sample, once the label's gate opens."""
        started.append(label)
        await gates[label].wait()
        elicited = await ctx.elicit(f"Name for {label}?", NAME_SCHEMA)
        sampled = await ctx.sample(f"Sample for {label}", max_tokens=5)
        return {"name": elicited.data["name"], "sampled": sampled.text}

    return app


def answering(who: str, asked: list[tuple[str, str]]) -> dict:
    """Client handlers that record what they were asked and answer as ``who``."""

    def elicitation(params):
        asked.append((who, params["message"]))
        return {"action": "accept", "content": {"name": who}}

    def sampling(params):
        asked.append((who, params["messages"][0]["content"]["text"]))
        return {"role": "assistant", "content": {"type": "text", "text": f"from {who}"}, "model": "t"}

    return {"elicitation": elicitation, "sampling": sampling}


async def serve_http(app: Server) -> tuple[str, asyncio.Task]:
    bound: asyncio.Future = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(app.serve_http("127.0.0.1", 0, ready=lambda h, p: bound.set_result(p)))
    return f"http://127.0.0.1:{await bound}/mcp", task


@contextlib.asynccontextmanager
async def gateway_over_http(app: Server):
    """A running gateway mounting ``app`` (namespace ``up``), served over Streamable HTTP."""
    url, served = await serve_http(app)
    try:
        gateway = Server("gateway")
        gateway.mount(url, namespace="up")
        async with gateway.running():
            yield gateway
    finally:
        served.cancel()
        await asyncio.gather(served, return_exceptions=True)


async def a_then_b_each_asked_their_own(gateway: Server, gates: dict[str, asyncio.Event], started: list[str],
                                        asked: list[tuple[str, str]], version: Optional[str] = None) -> None:
    """Client A calls ``up_ask`` first and B later (B is then the most recent caller); A's
    call's questions must go to A and B's to B. ``version``: what both clients must speak."""
    async with mcpfast.connect(gateway, **answering("A", asked)) as a, \
            mcpfast.connect(gateway, **answering("B", asked)) as b:
        if version is not None:
            assert a.protocol_version == b.protocol_version == version
        first = asyncio.ensure_future(a.call_tool("up_ask", {"label": "first"}))
        await eventually(lambda: started == ["first"])
        second = asyncio.ensure_future(b.call_tool("up_ask", {"label": "second"}))
        await eventually(lambda: started == ["first", "second"])
        gates["first"].set()
        answered = await first
        assert answered["structuredContent"] == {"name": "A", "sampled": "from A"}
        assert asked == [("A", "Name for first?"), ("A", "Sample for first")]
        gates["second"].set()
        answered = await second
        assert answered["structuredContent"] == {"name": "B", "sampled": "from B"}
        assert asked[2:] == [("B", "Name for second?"), ("B", "Sample for second")]


def test_each_client_gets_only_its_own_calls_questions_from_an_http_upstream():
    async def main():
        gates = {"first": asyncio.Event(), "second": asyncio.Event()}
        started: list[str] = []
        asked: list[tuple[str, str]] = []
        async with gateway_over_http(asking_app(gates, started)) as gateway:
            await a_then_b_each_asked_their_own(gateway, gates, started, asked)

    run(main())


def test_interleaved_calls_of_two_clients_each_get_their_own_questions_over_http():
    async def main():
        labels = [f"{who}{n}" for n in range(4) for who in ("a", "b")]
        gates = {label: asyncio.Event() for label in labels}
        started: list[str] = []
        asked: list[tuple[str, str]] = []
        async with gateway_over_http(asking_app(gates, started)) as gateway:
            async with mcpfast.connect(gateway, **answering("a", asked)) as a, \
                    mcpfast.connect(gateway, **answering("b", asked)) as b:
                clients = {"a": a, "b": b}
                calls = {label: asyncio.ensure_future(clients[label[0]].call_tool("up_ask", {"label": label}))
                         for label in labels}
                await eventually(lambda: sorted(started) == sorted(labels))
                for gate in gates.values():  # every question at once
                    gate.set()
                for label, call in calls.items():
                    answered = await call
                    assert answered["structuredContent"]["name"] == label[0], label
                assert all(question.split(" for ")[1].rstrip("?")[0] == who for who, question in asked), asked
                assert len(asked) == 2 * len(labels)

    run(main())


def test_a_question_whose_client_cannot_answer_it_is_put_to_no_other_client_over_http():
    async def main():
        gates = {"first": asyncio.Event(), "second": asyncio.Event()}
        started: list[str] = []
        asked: list[tuple[str, str]] = []
        async with gateway_over_http(asking_app(gates, started)) as gateway:
            # A declares neither elicitation nor sampling; B, calling later, does.
            async with mcpfast.connect(gateway) as a, \
                    mcpfast.connect(gateway, **answering("B", asked)) as b:
                first = asyncio.ensure_future(a.call_tool("up_ask", {"label": "first"}))
                await eventually(lambda: started == ["first"])
                second = asyncio.ensure_future(b.call_tool("up_ask", {"label": "second"}))
                await eventually(lambda: started == ["first", "second"])
                gates["first"].set()
                refused = await first
                assert refused["isError"] is True
                assert "elicitation" in refused["content"][0]["text"]
                assert asked == []
                gates["second"].set()
                assert (await second)["structuredContent"] == {"name": "B", "sampled": "from B"}

    run(main())


def task_asking_app(gate: asyncio.Event, outcome: list) -> Server:
    """An upstream with a task tool that, once the gate opens, elicits a name; and a
    ``hold`` tool that waits on its own gate (a call in flight from another client)."""
    app = Server("tasker")
    held = asyncio.Event()
    app.held = held  # type: ignore[attr-defined]
    app.holding = []  # type: ignore[attr-defined]

    @app.tool(task_support="optional")
    async def ask_in_task(ctx: Context) -> str:
        """Within a task: ask the client for a name."""
        await gate.wait()
        try:
            elicited = await ctx.elicit("Name for the task?", NAME_SCHEMA)
        except Exception as exc:
            outcome.append(("error", str(exc)))
            raise
        outcome.append(("answer", elicited.data["name"]))
        return elicited.data["name"]

    @app.tool()
    async def hold() -> str:
        """Wait until released."""
        app.holding.append(True)  # type: ignore[attr-defined]
        await held.wait()
        return "released"

    return app


def test_a_task_question_goes_to_the_tasks_owner_not_the_latest_caller():
    async def main():
        gate, outcome = asyncio.Event(), []
        upstream = task_asking_app(gate, outcome)
        gateway = Server("gateway")
        gateway.mount(upstream, namespace="t")
        asked: list[tuple[str, str]] = []
        async with gateway.running():
            async with mcpfast.connect(gateway, **answering("owner", asked)) as owner, \
                    mcpfast.connect(gateway, **answering("other", asked)) as other:
                assert owner.protocol_version == "2025-11-25"
                created = await owner.request("tools/call", {"name": "t_ask_in_task", "arguments": {},
                                                             "task": {"ttl": 60000}})
                task_id = created["task"]["taskId"]
                # Another client's call waits on the same upstream: the most recent caller.
                held = asyncio.ensure_future(other.call_tool("t_hold"))
                await eventually(lambda: upstream.holding == [True])
                gate.set()
                await eventually(lambda: outcome != [])
                assert outcome == [("answer", "owner")]
                assert asked == [("owner", "Name for the task?")]
                result = await owner.request("tasks/result", {"taskId": task_id})
                assert result["content"][0]["text"] == "owner"
                upstream.held.set()
                assert (await held)["content"][0]["text"] == "released"

    run(main())


def test_a_task_question_whose_owner_left_is_answered_with_an_error():
    async def main():
        gate, outcome = asyncio.Event(), []
        upstream = task_asking_app(gate, outcome)
        gateway = Server("gateway")
        gateway.mount(upstream, namespace="t")
        asked: list[tuple[str, str]] = []
        async with gateway.running():
            async with mcpfast.connect(gateway, **answering("other", asked)) as other:
                owner = await mcpfast.connect(gateway, **answering("owner", asked))
                await owner.request("tools/call", {"name": "t_ask_in_task", "arguments": {},
                                                   "task": {"ttl": 60000}})
                await owner.aclose()
                held = asyncio.ensure_future(other.call_tool("t_hold"))
                await eventually(lambda: upstream.holding == [True])
                gate.set()
                await eventually(lambda: outcome != [])
                [(kind, message)] = outcome
                assert kind == "error"
                assert "disconnected" in message, message
                assert asked == []  # never put to the other client
                upstream.held.set()
                await held

    run(main())


def test_a_2026_upstreams_input_rounds_go_to_the_client_of_the_call_not_the_latest_caller():
    async def main():
        gates = {"first": asyncio.Event(), "second": asyncio.Event()}
        started: list[str] = []
        gateway = Server("gateway")
        gateway.mount(asking_app(gates, started), namespace="up", protocol_version="2026-07-28")
        asked: list[tuple[str, str]] = []
        async with gateway.running():
            await a_then_b_each_asked_their_own(gateway, gates, started, asked, version="2025-11-25")

    run(main())
