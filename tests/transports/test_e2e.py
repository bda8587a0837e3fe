"""The real jsonrpc Session on both ends of a TCP connection (stdio: test_stdio_client.py)."""

import asyncio
import json

from mcpfast.jsonrpc import ConnectionClosed, Router, Session
from mcpfast.jsonrpc.errors import MESSAGE_TOO_LARGE, MessageTooLarge
from mcpfast.transports import open_tcp, serve_tcp


def echo_router():
    router = Router()
    router.add_request_handler("echo", lambda params, ctx: params)

    async def aecho(params, ctx):
        await asyncio.sleep(0)
        return params

    router.add_request_handler("aecho", aecho)
    return router


async def start_server(router, **options):
    bound = asyncio.get_running_loop().create_future()
    task = asyncio.ensure_future(serve_tcp(
        lambda send: Session(send, router=router), "127.0.0.1", 0,
        ready=lambda h, p: bound.set_result((h, p)), **options,
    ))
    return task, await bound


async def stop(task):
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


def test_many_requests_in_flight_over_tcp(run):
    async def go():
        server, address = await start_server(echo_router())
        async with await open_tcp(*address, lambda send: Session(send)) as handle:
            session = handle.conn
            sequential = [await session.request("echo", {"n": n}) for n in range(200)]
            in_flight = await asyncio.gather(
                *(session.request("aecho" if n % 3 else "echo", [n, "x" * (n % 100)])
                  for n in range(5000))
            )
        await stop(server)
        return sequential, in_flight

    sequential, in_flight = run(go(), timeout=90)
    assert sequential == [{"n": n} for n in range(200)]
    assert in_flight == [[n, "x" * (n % 100)] for n in range(5000)]


def test_several_clients_share_one_router(run):
    async def client(address, k):
        async with await open_tcp(*address, lambda send: Session(send)) as handle:
            return await asyncio.gather(*(handle.conn.request("echo", [k, n]) for n in range(300)))

    async def go():
        server, address = await start_server(echo_router())
        results = await asyncio.gather(*(client(address, k) for k in range(8)))
        await stop(server)
        return results

    for k, result in enumerate(run(go())):
        assert result == [[k, n] for n in range(300)]


def test_oversize_request_gets_an_error_with_its_id_and_the_session_goes_on(run):
    async def go():
        server, address = await start_server(echo_router(), max_frame_size=1024)
        replies = []
        reader, writer = await asyncio.open_connection(*address)
        writer.write(b'{"jsonrpc":"2.0","id":1,"method":"echo","params":["' + b"z" * 5000 + b'"]}\n')
        # The id after the large params: not in the line's first bytes, so null.
        writer.write(b'{"jsonrpc":"2.0","method":"echo","params":["' + b"z" * 5000 + b'"],"id":9}\n')
        writer.write(b'{"jsonrpc":"2.0","id":2,"method":"echo","params":["small"]}\n')
        writer.write(b'not json\n')
        for _ in range(4):
            replies.append(json.loads(await reader.readline()))
        writer.close()
        await stop(server)
        return replies

    too_large, too_large_late_id, echoed, parse_error = run(go())
    assert too_large["id"] == 1 and too_large["error"]["code"] == MESSAGE_TOO_LARGE
    assert too_large["error"]["data"]["limit"] == 1024
    assert too_large_late_id["id"] is None
    assert too_large_late_id["error"]["code"] == MESSAGE_TOO_LARGE
    assert echoed == {"jsonrpc": "2.0", "id": 2, "result": ["small"]}
    assert parse_error["id"] is None and parse_error["error"]["code"] == -32700


def test_oversize_request_and_oversize_response_fail_the_call_at_once(run):
    async def go():
        server, address = await start_server(echo_router(), max_frame_size=4096)
        # The client reads at most 2048 bytes per frame.
        async with await open_tcp(*address, lambda send: Session(send),
                                  max_frame_size=2048) as handle:
            session = handle.conn
            outcomes = []
            for params in (["x" * 10_000], ["y" * 3000], ["fits"]):
                try:
                    outcomes.append(await asyncio.wait_for(session.request("echo", params), 30))
                except MessageTooLarge as exc:
                    outcomes.append(exc)
        await stop(server)
        return outcomes

    request_too_large, response_too_large, fits = run(go())
    # The server refused the request by its id; the client failed the response it dropped.
    assert isinstance(request_too_large, MessageTooLarge)
    assert request_too_large.data == {"limit": 4096, "size": request_too_large.data["size"]}
    assert isinstance(response_too_large, MessageTooLarge)
    assert "larger than the frame limit of 2048 bytes" in str(response_too_large)
    assert fits == ["fits"]


def test_server_going_away_fails_waiting_requests(run):
    async def go():
        router = echo_router()
        never = asyncio.Event()

        async def hang(params, ctx):
            await never.wait()

        router.add_request_handler("hang", hang)
        server, address = await start_server(router)
        handle = await open_tcp(*address, lambda send: Session(send))
        waiting = [asyncio.ensure_future(handle.conn.request("hang")) for _ in range(10)]
        await asyncio.sleep(0)
        await handle.conn.request("echo", [1])  # the hangs have reached the server
        await stop(server)
        results = await asyncio.gather(*waiting, return_exceptions=True)
        await handle.close()
        return results

    for result in run(go()):
        assert isinstance(result, ConnectionClosed)
        assert isinstance(result.__cause__, ConnectionError)
