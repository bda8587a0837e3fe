"""The benchmark harness is trustworthy: valid fixtures, peers checked, ratios computed right.

These run in CI so that a benchmark peer that decodes or encodes wrongly is caught there, and a
broken report is not discovered in the middle of a benchmark run.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pyperf
import pytest

from bench import harness, peers, report
from bench.fixtures import (
    BATCH,
    BY_KEY,
    FIXTURES,
    NOTIFICATION,
    REQUEST,
    RESPONSE,
    ROW_MEMBERS,
    envelope,
)

# --- fixtures ------------------------------------------------------------------------------

ANSWERS = {"call_response": "tools/call", "tools_list": "tools/list",
           **{f"rows{n}": "tools/call" for n in ROW_MEMBERS}}


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f.key)
def test_fixture_is_valid_mcp_json_rpc(fixture, mcp_schema):
    message = json.loads(fixture.frame)
    assert message == fixture.message
    if fixture.kind == BATCH:
        # Batches exist only in 2025-03-26.
        assert mcp_schema("2025-03-26").check_message(message) == "JSONRPCBatch"
        assert len(message) == 10
        ids = [item["id"] for item in message]
        assert len(set(ids)) == 10
        assert {type(i) for i in ids} == {int, str}
    else:
        checked = mcp_schema("2025-11-25").check_message(message, answers=ANSWERS.get(fixture.key))
        expected = {
            "call_request": "CallToolRequest",
            "call_response": "CallToolResult",
            "progress": "ProgressNotification",
            "tools_list": "ListToolsResult",
            **{f"rows{n}": "CallToolResult" for n in ROW_MEMBERS},
        }[fixture.key]
        assert checked == expected


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f.key)
def test_fixture_frame_is_one_compact_utf8_line(fixture):
    assert b"\n" not in fixture.frame and b"\r" not in fixture.frame
    assert fixture.frame.decode("utf-8")
    assert fixture.frame == json.dumps(
        fixture.message, separators=(",", ":"), ensure_ascii=False).encode()
    assert envelope(fixture.kind, fixture.fields) == fixture.message


def test_fixture_kinds_and_fields():
    assert [f.kind for f in FIXTURES] == [REQUEST, RESPONSE, NOTIFICATION, RESPONSE, BATCH,
                                          RESPONSE, RESPONSE, RESPONSE]
    assert BY_KEY["call_request"].fields == (42, "tools/call", BY_KEY["call_request"].message["params"])
    assert BY_KEY["progress"].fields[0] == "notifications/progress"
    assert BY_KEY["tools_list"].fields[0] == 7
    assert all(len(item) == 3 for item in BY_KEY["batch10"].fields)


def test_tools_list_response_is_about_10_kb_with_40_tools():
    fixture = BY_KEY["tools_list"]
    assert 9_000 <= fixture.size <= 11_000
    tools = fixture.message["result"]["tools"]
    assert len(tools) == 40
    assert len({tool["name"] for tool in tools}) == 40
    assert all(tool["inputSchema"]["type"] == "object" for tool in tools)


def test_row_fixtures_are_ten_objects_of_one_shape():
    for members in ROW_MEMBERS:
        rows = BY_KEY[f"rows{members}"].fields[1]["structuredContent"]["rows"]
        assert len(rows) == 10
        assert {tuple(row) for row in rows} == {tuple(rows[0])} and len(rows[0]) == members
        assert len({row["id"] for row in rows}) == 10


def test_small_fixtures_are_small():
    for key in ("call_request", "call_response", "progress"):
        assert 100 <= BY_KEY[key].size <= 400


# --- peers: every available one must decode and encode every fixture exactly like json -------

@pytest.mark.parametrize("peer", peers.PEERS, ids=lambda p: p.key)
@pytest.mark.parametrize("op", [peers.DECODE, peers.ENCODE])
def test_peer_agrees_with_json_or_says_why_not(peer, op):
    unavailable = peer.unavailable_reason()
    for fixture in FIXTURES:
        status, detail = peers.check(peer, op, fixture)
        if unavailable:
            assert (status, detail) == (peers.UNAVAILABLE, unavailable)
        elif peer.unsupported_reason(op, fixture):
            assert status == peers.UNSUPPORTED, (fixture.key, detail)
        else:
            assert (status, detail) == (peers.OK, ""), f"{peer.key} {op} {fixture.key}"


def test_json_peer_is_always_checked_ok():
    for op in (peers.DECODE, peers.ENCODE):
        for fixture in FIXTURES:
            assert peers.check(peers.BY_KEY["json"], op, fixture) == (peers.OK, "")


def test_official_sdk_has_no_batch_row_and_pysimdjson_no_encoder():
    sdk, simd = peers.BY_KEY["mcp-sdk"], peers.BY_KEY["pysimdjson"]
    assert sdk.unsupported_reason(peers.DECODE, BY_KEY["batch10"])
    assert sdk.unsupported_reason(peers.ENCODE, BY_KEY["batch10"])
    assert sdk.unsupported_reason(peers.DECODE, BY_KEY["call_request"]) is None
    assert simd.unsupported_reason(peers.ENCODE, BY_KEY["call_request"])
    assert simd.unsupported_reason(peers.DECODE, BY_KEY["batch10"]) is None


class _FakePeer(peers.Peer):
    """A peer whose decoder and encoder return what a test tells them to."""

    key = "fake"
    label = "fake"
    module = "json"

    def __init__(self, decoded=None, encoded=None, error=None):
        self.decoded, self.encoded, self.error = decoded, encoded, error

    def decoder(self, fixture):
        def decode():
            if self.error:
                raise self.error
            return self.decoded
        return decode

    def encoder(self, fixture):
        def encode():
            if self.error:
                raise self.error
            return self.encoded
        return encode


def test_check_catches_a_decoder_that_changes_a_type():
    fixture = BY_KEY["call_request"]
    id_, method, params = fixture.fields
    assert peers.check_decoder(_FakePeer(decoded=(id_, method, params)), fixture) == (peers.OK, "")
    for wrong in [(float(id_), method, params), (str(id_), method, params), [id_, method, params],
                  (id_, method, {**params, "name": "other"}), (id_, method)]:
        status, detail = peers.check_decoder(_FakePeer(decoded=wrong), fixture)
        assert status == peers.WRONG and detail.startswith("got ")


def test_check_catches_a_decoder_that_turns_false_into_zero():
    fixture = BY_KEY["call_response"]
    id_, result = fixture.fields
    assert result["isError"] is False
    status, _ = peers.check_decoder(_FakePeer(decoded=(id_, {**result, "isError": 0})), fixture)
    assert status == peers.WRONG


def test_check_catches_raising_and_wrong_encoders():
    fixture = BY_KEY["progress"]
    good = json.dumps(fixture.message).encode()
    assert peers.check_encoder(_FakePeer(encoded=good), fixture) == (peers.OK, "")
    status, detail = peers.check_encoder(_FakePeer(error=ValueError("boom")), fixture)
    assert status == peers.WRONG and "ValueError: boom" in detail
    status, detail = peers.check_encoder(_FakePeer(encoded=good.decode()), fixture)
    assert status == peers.WRONG and "not bytes" in detail
    status, detail = peers.check_encoder(_FakePeer(encoded=good[:-1]), fixture)
    assert status == peers.WRONG and "not JSON" in detail
    changed = json.dumps({**fixture.message, "method": "notifications/message"}).encode()
    assert peers.check_encoder(_FakePeer(encoded=changed), fixture)[0] == peers.WRONG


def test_check_reports_a_missing_library_as_unavailable():
    class Missing(_FakePeer):
        module = "no_such_module_for_mcpfast_bench"

    status, detail = peers.check_decoder(Missing(), BY_KEY["call_request"])
    assert status == peers.UNAVAILABLE and "no_such_module_for_mcpfast_bench" in detail


def test_strict_equal_compares_types_at_every_level():
    assert peers.strict_equal({"a": [1, "x", None, 1.5]}, {"a": [1, "x", None, 1.5]})
    assert not peers.strict_equal(1, 1.0)
    assert not peers.strict_equal(1, True)
    assert not peers.strict_equal({"a": [0]}, {"a": [False]})
    assert not peers.strict_equal((1, 2), [1, 2])
    assert not peers.strict_equal({"a": 1}, {"b": 1})
    assert not peers.strict_equal([1, 2], [1, 2, 3])


# --- the report -----------------------------------------------------------------------------

def _benchmark(name: str, values: list[float], **metadata) -> pyperf.Benchmark:
    meta = {"name": name, "unit": "second", "loops": 1000, **metadata}
    return pyperf.Benchmark([pyperf.Run(values, metadata=meta, collect_metadata=False)])


def _write_results(directory, benchmarks, statuses, group="codec"):
    pyperf.BenchmarkSuite(benchmarks).dump(str(directory / f"{group}.json"))
    harness.write_status(str(directory / "status" / f"{group}.json"), group, statuses)


def _status(name, status=harness.OK, detail="", title="decode tools/call request (172 B)"):
    case, impl = name.rsplit("/", 1)
    return {"name": name, "case": case, "impl": impl, "impl_label": f"label-{impl}",
            "case_title": title, "display": harness.DISPLAY_OPS, "status": status, "detail": detail}


@pytest.fixture
def synthetic_results(tmp_path):
    """mcpfast 1 us, orjson 2 us, msgspec Struct 0.5 us to decode; a wrong and an absent row."""
    decode = "codec/decode/call_request"
    encode = "codec/encode/call_response"
    benchmarks = [
        _benchmark(f"{decode}/mcpfast", [1.0e-6, 1.1e-6, 0.9e-6]),
        _benchmark(f"{decode}/orjson", [2.0e-6, 2.0e-6, 2.0e-6]),
        _benchmark(f"{decode}/msgspec-typed", [0.5e-6, 0.5e-6, 0.5e-6]),
        _benchmark(f"{encode}/mcpfast", [0.25e-6, 0.25e-6]),
        _benchmark(f"{encode}/orjson", [0.75e-6, 0.75e-6]),
    ]
    statuses = [
        _status(f"{decode}/mcpfast"),
        _status(f"{decode}/orjson"),
        _status(f"{decode}/msgspec-typed"),
        _status(f"{decode}/badlib", harness.WRONG, "got (42.0, 'tools/call') expected (42, ...)"),
        _status(f"{decode}/mcp-sdk", harness.UNSUPPORTED, "no batch support"),
        _status(f"{encode}/mcpfast", title="encode tools/call response (261 B)"),
        _status(f"{encode}/orjson", title="encode tools/call response (261 B)"),
    ]
    (tmp_path / "status").mkdir()
    _write_results(tmp_path, benchmarks, statuses)
    return tmp_path


def test_report_computes_medians_and_speedups(synthetic_results):
    cases = {case.case: case for case in report.load_results(str(synthetic_results))}
    decode = cases["codec/decode/call_request"]
    assert [row.impl for row in decode.rows] == ["mcpfast", "orjson", "msgspec-typed", "badlib", "mcp-sdk"]
    assert decode.primary.median == pytest.approx(1.0e-6)
    assert decode.speedup("orjson") == pytest.approx(2.0)
    assert decode.speedup("msgspec-typed") == pytest.approx(0.5)
    assert decode.speedup("badlib") is None
    assert decode.rate(decode.primary) == pytest.approx(1.0e6)
    assert decode.row("badlib").status == harness.WRONG
    assert cases["codec/encode/call_response"].speedup("orjson") == pytest.approx(3.0)


def test_report_marks_targets_and_reference_numbers(synthetic_results):
    cases = report.load_results(str(synthetic_results))
    marks = report.evaluate(cases, report.load_references())
    verdicts = {(m.case, m.impl, m.short.split(":")[0]): m.verdict for m in marks}
    # 0.5x msgspec Struct: the "faster than msgspec typed" target is short.
    assert verdicts[("codec/decode/call_request", "msgspec-typed", "target >1x")] == report.SHORT
    # 3x orjson: the encode target passes.
    assert verdicts[("codec/encode/call_response", "orjson", "target >=1x")] == report.PASS
    # 1M ops/s decode is short of the seed's 2.69M; 4M ops/s encode passes it.
    assert verdicts[("codec/decode/call_request", "mcpfast", "seed 2.69M")] == report.SHORT
    assert verdicts[("codec/encode/call_response", "mcpfast", "seed 2.69M")] == report.PASS
    # Cases not in this run are "n/a", never passed.
    assert verdicts[("e2e/stdio/in_flight_1/rt", "official", "target >=20x")] == "n/a"


def test_report_table_shows_ratios_spread_and_untimed_rows(synthetic_results):
    table = report.render(str(synthetic_results))
    lines = table.splitlines()

    def line_of(label):
        return next(line for line in lines if line.strip().startswith(label))

    assert "1 us" in line_of("label-mcpfast") and "1M ops/s" in line_of("label-mcpfast")
    assert "seed 2.69M: SHORT" in line_of("label-mcpfast")
    assert line_of("label-orjson").split()[-1] == "2x"
    assert "0.5x" in line_of("label-msgspec-typed") and "target >1x: SHORT" in line_of("label-msgspec-typed")
    # The spread of 1.0/1.1/0.9 us is a 10% standard deviation.
    assert "±10.0%" in line_of("label-mcpfast")
    assert "NOT TIMED: wrong result: got (42.0" in line_of("label-badlib")
    assert "absent: no batch support" in line_of("label-mcp-sdk")
    assert "codec/decode/call_request/badlib: got (42.0" in table
    assert "3x" in table  # encode speed-up over orjson


def test_report_reads_pyperf_results_without_status_files(tmp_path):
    (tmp_path / "status").mkdir()
    pyperf.BenchmarkSuite([
        _benchmark("pending/add_pop/in_flight_1/mcpfast", [1e-7] * 3, impl_label="table",
                   case_title="add + pop", display=harness.DISPLAY_OPS),
        _benchmark("pending/add_pop/in_flight_1/dict", [3e-7] * 3, impl_label="dict",
                   case_title="add + pop", display=harness.DISPLAY_OPS),
    ]).dump(str(tmp_path / "pending.json"))
    (case,) = report.load_results(str(tmp_path))
    assert case.title == "add + pop"
    assert case.speedup("dict") == pytest.approx(3.0)
    assert "10M ops/s" in report.render(str(tmp_path))


def test_report_pairs_rounds_timed_in_turn(tmp_path):
    # Three rounds on a machine whose speed drifts, mcpfast and the floor timed in turn in
    # each: by round mcpfast does 0.8, 0.2 and 0.8 of the floor's requests. The median of
    # the rounds' ratios is 0.8; the ratio of the medians (1.0e-5 / 5.0e-5) would say 0.2,
    # as the slow phase held two of mcpfast's values and one of the floor's.
    (tmp_path / "status").mkdir()
    mcpfast, floor = [1.25e-5, 5.0e-5, 5.0e-5], [1.0e-5, 1.0e-5, 4.0e-5]
    pyperf.BenchmarkSuite([
        _benchmark("http/2026/conns_32/rt/mcpfast", mcpfast, **{harness.PAIRED_ROUNDS: 1}),
        _benchmark("http/2026/conns_32/rt/floor", floor, **{harness.PAIRED_ROUNDS: 1}),
        _benchmark("http/2026/conns_1/rt/mcpfast", mcpfast),  # not marked: not paired
        _benchmark("http/2026/conns_1/rt/floor", floor),
    ]).dump(str(tmp_path / "http.json"))
    cases = {case.case: case for case in report.load_results(str(tmp_path))}
    paired, unpaired = cases["http/2026/conns_32/rt"], cases["http/2026/conns_1/rt"]
    assert paired.row("floor").values == floor
    assert paired.speedup("floor") == pytest.approx(0.8)
    assert unpaired.speedup("floor") == pytest.approx(0.2)
    marks = {(m.case, m.impl): m.verdict for m in report.evaluate(list(cases.values()), [])}
    assert marks[("http/2026/conns_32/rt", "floor")] == report.PASS
    assert marks[("http/2026/conns_1/rt", "floor")] == report.SHORT


@pytest.mark.parametrize("struct_time, decode_verdict", [(1.25e-6, report.PASS), (1.2e-6, report.SHORT)])
def test_report_marks_the_decode_targets_against_msgspec(tmp_path, struct_time, decode_verdict):
    # mcpfast decodes the small request in 1 us: at most 0.8x msgspec Struct's time when
    # that takes 1.25 us (not when it takes 1.2 us); and the tools/list response in 20 us,
    # less than msgspec (untyped)'s 28 us.
    (tmp_path / "status").mkdir()
    _write_results(tmp_path, [
        _benchmark("codec/decode/call_request/mcpfast", [1.0e-6] * 3),
        _benchmark("codec/decode/call_request/msgspec-typed", [struct_time] * 3),
        _benchmark("codec/decode/tools_list/mcpfast", [20e-6] * 3),
        _benchmark("codec/decode/tools_list/msgspec", [28e-6] * 3),
    ], [])
    marks = report.evaluate(report.load_results(str(tmp_path)), [])
    verdicts = {(m.case, m.impl, m.short.split(":")[0]): m.verdict for m in marks}
    assert verdicts[("codec/decode/call_request", "msgspec-typed", "target >=1.25x")] == decode_verdict
    assert verdicts[("codec/decode/call_request", "msgspec-typed", "target >1x")] == report.PASS
    assert verdicts[("codec/decode/tools_list", "msgspec", "target >=1x")] == report.PASS


@pytest.mark.parametrize("seconds, text", [
    (2.5e-9, "2.5 ns"), (999e-9, "999 ns"), (1.0e-6, "1 us"), (12.34e-6, "12.3 us"),
    (0.25, "250 ms"), (3.0, "3 s"),
])
def test_format_seconds(seconds, text):
    assert report.format_seconds(seconds) == text


@pytest.mark.parametrize("rate, text", [
    (12.0, "12"), (950.0, "950"), (2_690_000.0, "2.69M"), (269_000.0, "269K"), (1.5e9, "1.5G"),
])
def test_format_rate(rate, text):
    assert report.format_rate(rate) == text


# --- the harness: what the manager and a worker register ------------------------------------

class _RecordingRunner:
    """Stands in for pyperf.Runner: fixed parsed arguments, records bench_time_func calls."""

    def __init__(self, **args):
        import argparse

        defaults = {"match": "", "worker": False, "worker_task": None, "exclude": "",
                    "status_output": None}
        self.args = argparse.Namespace(**{**defaults, **args})
        self.registered = []

    def parse_args(self):
        return self.args

    def bench_time_func(self, name, time_func, *args, inner_loops=None, metadata=None):
        self.registered.append((name, time_func, args, inner_loops, metadata))


def _cases(prepared):
    def case(name, status):
        def prepare():
            prepared.append(name)
            return harness.time_calls, (lambda: None,)
        return harness.Case(name=name, impl_label=name, case_title="t",
                            check=lambda: (status, "" if status == harness.OK else "why"),
                            prepare=prepare, inner_loops=4)
    return [case("g/c/a", harness.OK), case("g/c/b", harness.WRONG),
            case("g/c/c", harness.OK), case("g/c/d", harness.UNAVAILABLE)]


def test_manager_checks_excludes_and_writes_status(tmp_path):
    prepared = []
    status_file = tmp_path / "status" / "g.json"
    runner = _RecordingRunner(status_output=str(status_file))
    harness.run(runner, "g", _cases(prepared))
    assert prepared == []  # the manager never prepares (imports, starts servers)
    assert [entry[0] for entry in runner.registered] == ["g/c/a", "g/c/c"]
    assert runner.args.exclude == "g/c/b,g/c/d"  # forwarded to the workers
    assert all(entry[3] == 4 for entry in runner.registered)
    status = json.loads(status_file.read_text())
    assert [(c["impl"], c["status"]) for c in status["cases"]] == [
        ("a", "ok"), ("b", "wrong"), ("c", "ok"), ("d", "unavailable")]


def test_worker_prepares_only_its_own_task_after_the_managers_exclusions():
    prepared = []
    runner = _RecordingRunner(worker=True, worker_task=1, exclude="g/c/b,g/c/d")
    harness.run(runner, "g", _cases(prepared))
    # Task 1 of the timed cases (a, c) is c, although c is the third case overall.
    assert prepared == ["g/c/c"]
    assert [entry[0] for entry in runner.registered] == ["g/c/a", "g/c/c"]
    time_func, args = runner.registered[1][1], runner.registered[1][2]
    assert time_func(10, *args) >= 0.0
    with pytest.raises(RuntimeError):
        runner.registered[0][1](10)


def test_match_selects_cases():
    prepared = []
    runner = _RecordingRunner(match="/(a|c)$")
    harness.run(runner, "g", _cases(prepared))
    assert [entry[0] for entry in runner.registered] == ["g/c/a", "g/c/c"]


def test_time_calls_calls_the_operation_loops_times():
    calls = []
    elapsed = harness.time_calls(7, lambda: calls.append(1))
    assert len(calls) == 7 and elapsed >= 0.0


def test_a_pending_benchmark_runs_through_pyperf(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "bench" / "bench_pending.py"
    out, status = tmp_path / "pending.json", tmp_path / "status" / "pending.json"
    subprocess.run(
        [sys.executable, str(script), "--match", "in_flight_1/", "--processes", "1",
         "--values", "1", "--warmups", "0", "--loops", "64", "--quiet",
         "-o", str(out), "--status-output", str(status)],
        check=True, capture_output=True, timeout=120)
    entries = json.loads(status.read_text())["cases"]
    assert [e["impl"] for e in entries] == ["mcpfast", "mcpfast-deadline", "dict"]
    timed = {e["name"] for e in entries if e["status"] == harness.OK}
    assert "pending/add_pop/in_flight_1/dict" in timed
    names = {bench.get_name() for bench in pyperf.BenchmarkSuite.load(str(out)).get_benchmarks()}
    assert names == timed
    (case,) = report.load_results(str(tmp_path))
    assert case.row("dict").timed and case.row("dict").median > 0


def test_the_pgo_training_run_does_its_work_and_checks_it():
    """scripts/build --pgo trains the compiler on bench/pgo_train.py: it must keep running
    (and checking its answers) as the code changes."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "bench/pgo_train.py", "--rounds", "600"],
                          capture_output=True, text=True, timeout=120,
                          cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "pgo_train: 600 rounds" in done.stdout


# --- the gateway bench's byte relay (bench/servers/relay.py), the floor of a hop ---------------

RELAY = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                     "bench", "servers", "relay.py")
COPY = "import shutil, sys; shutil.copyfileobj(sys.stdin.buffer, sys.stdout.buffer)"


def test_round_order_gives_each_contender_each_place_equally_often():
    from bench.bench_gateway import round_order

    assert ["".join(round_order(list("AB"), r)) for r in range(4)] == ["AB", "BA", "BA", "AB"]
    for contenders in ("ABC", "ABCDE"):
        orders = [round_order(list(contenders), r) for r in range(2 * len(contenders))]
        assert all(sorted(order) == list(contenders) for order in orders)
        for place in range(len(contenders)):
            assert sorted(order[place] for order in orders) == sorted(contenders * 2)


def test_relay_stdio_forwards_bytes_verbatim_both_ways():
    # Megabytes each way: the child's stdin and the relay's stdout both fill up on the way
    # (flow control), and every byte still arrives, in order; EOF on stdin ends the child
    # and then the relay, with the child's status.
    data = os.urandom(8 << 20)
    done = subprocess.run([sys.executable, RELAY, "stdio", "--", sys.executable, "-c", COPY],
                          input=data, capture_output=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout == data


def test_relay_stdio_ends_when_its_child_does():
    relay = subprocess.Popen([sys.executable, RELAY, "stdio", "--", sys.executable, "-c",
                              "import sys; sys.stdout.write('x' * 100000); sys.exit(3)"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert relay.stdout.read() == b"x" * 100000  # its stdin still open
        assert relay.wait(30) == 3
    finally:
        relay.kill()
        relay.stdin.close()
        relay.stdout.close()


def test_relay_tcp_forwards_bytes_both_ways_and_passes_on_a_close():
    from bench.bench_gateway import free_port, wait_for_port

    async def main():
        hung_up = asyncio.Event()
        ended = asyncio.Event()

        async def upstream(reader, writer):
            # "echo\n": bytes written back until EOF; "hang up\n": the upstream closes first.
            line = await reader.readline()
            if line == b"echo\n":
                while chunk := await reader.read(1 << 16):
                    writer.write(chunk)
                    await writer.drain()
                ended.set()
            elif line == b"hang up\n":
                hung_up.set()
            writer.close()

        server = await asyncio.start_server(upstream, "127.0.0.1", 0)
        port = free_port()
        relay = subprocess.Popen([sys.executable, RELAY, "tcp", str(port), "127.0.0.1",
                                  str(server.sockets[0].getsockname()[1])])
        try:
            await wait_for_port(port)
            data = os.urandom(8 << 20)
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"echo\n")

            async def send():
                for start in range(0, len(data), 1 << 20):
                    writer.write(data[start:start + (1 << 20)])
                    await writer.drain()

            sending = asyncio.create_task(send())
            assert await reader.readexactly(len(data)) == data
            await sending
            writer.close()  # the relay closes its upstream connection in turn
            await asyncio.wait_for(ended.wait(), 30)

            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"hang up\n")
            assert await asyncio.wait_for(reader.read(), 30) == b""  # the upstream's close passed on
            assert hung_up.is_set()
            writer.close()
        finally:
            relay.terminate()
            relay.wait(10)
            server.close()

    asyncio.run(asyncio.wait_for(main(), 90))


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_gateway_bench_relays_an_mcp_session(transport):
    from bench import bench_gateway

    async def main():
        pair = await bench_gateway.open_relay(transport)
        try:
            await bench_gateway.check(pair)
            texts = [f"call {i} é" for i in range(256)]
            results = await asyncio.gather(*(pair.client.call_tool("echo", {"text": text}) for text in texts))
            assert [result["content"][0]["text"] for result in results] == texts
        finally:
            await pair.close()

    asyncio.run(asyncio.wait_for(main(), 90))
