"""Read a results directory (pyperf JSON + status files) and print the comparison table.

    python -m bench.report bench/results/<date-time>

For every case: each implementation's median with its spread (standard deviation, as a % of the
median) and its rate, mcpfast's speed-up over every peer (peer time / mcpfast time: > 1 means
mcpfast is faster), the seed design's reference number beside the mcpfast row it is compared with
(bench/reference.json) and the project's targets, each marked PASS or SHORT.  Rows that were not
timed say why: the library is missing, cannot do the operation, or gave a wrong result.

The machine these run on is shared and noisy: ratios measured in the same run are the headline
(for rows timed round by round in turn, the median of the rounds' ratios); absolute times are
shown with their spread.
"""

from __future__ import annotations

import glob
import json
import os
import statistics
import sys
from dataclasses import dataclass, field

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench import harness

REFERENCE_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference.json")
PRIMARY = "mcpfast"
GROUP_ORDER = ("codec", "framing", "pending", "e2e", "http")
PASS = "PASS"
SHORT = "SHORT"


@dataclass(frozen=True)
class Target:
    """``primary`` (mcpfast unless given) must be at least ``factor`` times faster than
    ``peer`` in ``case``."""

    case: str
    peer: str
    factor: float
    text: str
    strict: bool = False  # "faster than" (>) rather than "at least" (>=)
    primary: str = PRIMARY

    def met(self, ratio: float) -> bool:
        return ratio > self.factor if self.strict else ratio >= self.factor


TARGETS: tuple[Target, ...] = (
    Target("codec/decode/call_request", "msgspec-typed", 1.0,
           "decode small request: faster than msgspec typed", strict=True),
    # Issue 13's bar: at most 0.8x msgspec Struct's time (a speed-up of 1 / 0.8).
    Target("codec/decode/call_request", "msgspec-typed", 1.25,
           "decode small request: at most 0.8x msgspec Struct's time"),
    Target("codec/decode/tools_list", "msgspec", 1.0,
           "decode tools/list response: at most msgspec (untyped)'s time"),
    Target("codec/encode/call_response", "orjson", 1.0,
           "encode small response: at least orjson's speed"),
    Target("e2e/stdio/in_flight_1/rt", "official", 20.0,
           "stdio, sequential: at least 20x the official SDK's round trips/s"),
    Target("e2e/stdio/in_flight_256/rt", "official", 100.0,
           "stdio, 256 in flight: at least 100x the official SDK's round trips/s"),
    Target("e2e/http/in_flight_1/rt", "official", 30.0,
           "Streamable HTTP, sequential: at least 30x the official SDK's round trips/s"),
    Target("e2e/stdio/in_flight_1/rt", "bare-client", 0.9,
           "client call path, sequential: at least 0.9x a bare asyncio client's round trips/s"),
    Target("e2e/stdio/in_flight_256/rt", "bare-client", 0.9,
           "client call path, 256 in flight: at least 0.9x a bare asyncio client's round trips/s"),
) + tuple(
    target
    for kind, title in (("stateless", "stateless HTTP"), ("2026", "HTTP at 2026-07-28"))
    for target in (
        Target(f"http/{kind}/conns_32/rt", "official", 20.0,
               f"{title}, 32 connections: at least 20x the official SDK's requests/s"),
        Target(f"http/{kind}/conns_1/rt", "floor", 0.7,
               f"{title}, sequential: at least 0.7x the uvloop+httptools floor"),
        Target(f"http/{kind}/conns_32/rt", "floor", 0.7,
               f"{title}, 32 connections: at least 0.7x the uvloop+httptools floor"),
    )
) + (
    Target("http/ws/conns_1/rt", "floor", 0.7, "WebSocket, sequential: at least 0.7x the picows floor"),
    Target("http/ws/conns_32/rt", "floor", 0.7, "WebSocket, 32 connections: at least 0.7x the picows floor"),
) + tuple(
    # Issue 36: spans and metrics on (the OTel SDK, a batch span processor) keep at least
    # 0.85x of mcpfast's own throughput with them off.
    Target(case, "mcpfast", 0.85, f"{title}, telemetry on: at least 0.85x mcpfast with it off",
           primary="mcpfast-otel")
    for case, title in (("http/stateless/conns_1/rt", "stateless HTTP, sequential"),
                        ("http/stateless/conns_32/rt", "stateless HTTP, 32 connections"),
                        ("e2e/stdio/in_flight_1/rt", "stdio, sequential"))
)


@dataclass
class Row:
    """One implementation in one case: timed (median set) or not (status and detail say why)."""

    name: str
    impl: str
    label: str
    status: str = harness.OK
    detail: str = ""
    median: float | None = None
    stdev: float | None = None
    nvalues: int = 0
    values: list[float] = field(default_factory=list)
    metadata: dict = field(default_factory=dict)

    @property
    def paired(self) -> bool:
        """Whether value i was timed in round i of rounds shared with the other rows of
        its case (bench_http: the implementations of a row timed in turn)."""
        return bool(self.metadata.get(harness.PAIRED_ROUNDS))

    @property
    def timed(self) -> bool:
        return self.median is not None

    @property
    def spread(self) -> float | None:
        """Standard deviation as a fraction of the median (None with fewer than 2 values)."""
        if self.stdev is None or not self.median:
            return None
        return self.stdev / self.median


@dataclass
class CaseResult:
    """All rows of one case (benchmark name without its last, implementation part)."""

    case: str
    title: str
    display: str
    rows: list[Row] = field(default_factory=list)

    @property
    def group(self) -> str:
        return self.case.split("/", 1)[0]

    def row(self, impl: str) -> Row | None:
        return next((row for row in self.rows if row.impl == impl), None)

    @property
    def primary(self) -> Row | None:
        row = self.row(PRIMARY)
        return row if row is not None and row.timed else None

    def speedup(self, impl: str, of: str = PRIMARY) -> float | None:
        """How many times faster ``of`` (mcpfast) is than ``impl`` here (None when either
        is untimed).

        Rows timed round by round in turn give the median of the rounds' own ratios: on a
        machine whose speed drifts within a minute, two values of one round were timed at
        nearly the same speed, two medians were not. Otherwise the ratio of the medians."""
        primary, other = self.primary if of == PRIMARY else self.row(of), self.row(impl)
        if primary is None or not primary.timed or other is None or not other.timed or not primary.median:
            return None
        if (primary.paired and other.paired and len(primary.values) == len(other.values) >= 2
                and all(primary.values)):
            return statistics.median(o / p for o, p in zip(other.values, primary.values))
        return other.median / primary.median

    def rate(self, row: Row) -> float | None:
        """Operations (frames, round trips) per second of a timed row; None for latency/CPU."""
        if not row.timed or not row.median:
            return None
        if self.display == harness.DISPLAY_STREAM:
            frames = row.metadata.get("stream_frames")
            return frames / row.median if frames else None
        if self.display in (harness.DISPLAY_OPS, harness.DISPLAY_CALLS):
            return 1.0 / row.median
        return None


def load_results(directory: str) -> list[CaseResult]:
    """Cases in run order, merging the status files with the pyperf results of ``directory``."""
    import pyperf

    cases: dict[str, CaseResult] = {}
    rows: dict[str, Row] = {}

    def add(name: str, label: str, title: str, display: str) -> Row:
        case_name, impl = name.rsplit("/", 1)
        case = cases.get(case_name)
        if case is None:
            case = cases[case_name] = CaseResult(case_name, title, display)
        row = Row(name=name, impl=impl, label=label)
        case.rows.append(row)
        rows[name] = row
        return row

    def group_rank(path: str) -> tuple[int, str]:
        group = os.path.basename(path).split(".")[0].split("-")[0]
        return (GROUP_ORDER.index(group) if group in GROUP_ORDER else len(GROUP_ORDER), path)

    for path in sorted(glob.glob(os.path.join(directory, "status", "*.json")), key=group_rank):
        with open(path, encoding="utf-8") as f:
            status = json.load(f)
        for entry in status["cases"]:
            row = add(entry["name"], entry["impl_label"], entry["case_title"], entry["display"])
            row.status, row.detail = entry["status"], entry["detail"]

    for path in sorted(glob.glob(os.path.join(directory, "*.json")), key=group_rank):
        if os.path.basename(path) == "run.json":
            continue
        for bench in pyperf.BenchmarkSuite.load(path).get_benchmarks():
            name = bench.get_name()
            meta = bench.get_metadata()
            row = rows.get(name) or add(
                name, meta.get("impl_label", name.rsplit("/", 1)[1]),
                meta.get("case_title", name.rsplit("/", 1)[0]),
                meta.get("display", harness.DISPLAY_OPS))
            row.status = harness.OK
            row.median = bench.median()
            row.nvalues = bench.get_nvalue()
            row.values = list(bench.get_values())
            row.stdev = bench.stdev() if row.nvalues >= 2 else None
            row.metadata = dict(meta)

    ordered = []
    for case in cases.values():
        # mcpfast first, then its variants, then the peers in run order.
        case.rows.sort(key=lambda r: 0 if r.impl == PRIMARY else 1 if r.impl.startswith(PRIMARY) else 2)
        ordered.append(case)
    return ordered


def load_references(path: str = REFERENCE_FILE) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return json.load(f)["references"]


# --- formatting ----------------------------------------------------------------------------

def format_seconds(seconds: float) -> str:
    unit, scale = next(((u, s) for u, s in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)) if seconds >= s),
                       ("ns", 1e-9))
    value = seconds / scale
    return f"{value:.3g} {unit}" if value < 100 else f"{value:.0f} {unit}"


def format_rate(rate: float) -> str:
    for suffix, scale in (("G", 1e9), ("M", 1e6), ("K", 1e3)):
        if rate >= scale:
            return f"{rate / scale:.3g}{suffix}"
    return f"{rate:.3g}" if rate < 100 else f"{rate:.0f}"


def format_ratio(ratio: float) -> str:
    return f"{ratio:.3g}x" if ratio < 100 else f"{ratio:.0f}x"


def format_spread(row: Row) -> str:
    spread = row.spread
    return "" if spread is None else f"±{spread * 100:.1f}%"


def _median_text(case: CaseResult, row: Row) -> str:
    if case.display == harness.DISPLAY_CPU:
        return f"{row.median * 1000:.3g} s/1k"
    if case.display == harness.DISPLAY_STREAM:
        return format_seconds(row.median) + "/pass"
    return format_seconds(row.median)


def _rate_text(case: CaseResult, row: Row) -> str:
    rate = case.rate(row)
    if rate is None:
        return ""
    if case.display == harness.DISPLAY_STREAM:
        megabytes = row.metadata.get("stream_bytes", 0) / row.median / 1e6
        return f"{megabytes:,.0f} MB/s  {format_rate(rate)} frames/s"
    if case.display == harness.DISPLAY_CALLS:
        return f"{format_rate(rate)} rt/s"
    return f"{format_rate(rate)} ops/s"


def _untimed_text(row: Row) -> str:
    if row.status == harness.WRONG:
        text = f"NOT TIMED: wrong result: {row.detail}"
    elif row.status == harness.UNSUPPORTED:
        text = f"absent: {row.detail}"
    elif row.status == harness.UNAVAILABLE:
        text = f"unavailable: {row.detail}"
    elif row.status == harness.OK:
        text = "no result: checked, but its benchmark did not complete (see the run's output)"
    else:
        text = f"no result ({row.status}{': ' + row.detail if row.detail else ''})"
    return text if len(text) <= 90 else text[:87] + "..."


@dataclass
class Mark:
    """One PASS/SHORT verdict (a target or a reference number), for the rows and the summary."""

    case: str
    impl: str        # the row it is printed beside
    short: str       # beside the row
    text: str        # in the summary
    verdict: str     # PASS, SHORT or "n/a"


def evaluate(cases: list[CaseResult], references: list[dict]) -> list[Mark]:
    by_case = {case.case: case for case in cases}
    marks = []
    for target in TARGETS:
        case = by_case.get(target.case)
        ratio = case.speedup(target.peer, target.primary) if case else None
        if ratio is None:
            verdict, got = "n/a", "not measured in this run"
        else:
            verdict, got = (PASS if target.met(ratio) else SHORT), format_ratio(ratio)
        bound = ">" if target.strict else ">="
        marks.append(Mark(
            target.case, target.peer if target.primary == PRIMARY else target.primary,
            f"target {bound}{format_ratio(target.factor)}: {verdict}",
            f"{target.text}; measured: {got}", verdict))
    for ref in references:
        for case_name in ref["compared_with"]:
            case = by_case.get(case_name)
            rate = case.rate(case.primary) if case and case.primary else None
            if rate is None:
                verdict, got = "n/a", "not measured in this run"
            else:
                verdict, got = (PASS if rate >= ref["value"] else SHORT), format_rate(rate)
            marks.append(Mark(
                case_name, PRIMARY,
                f"seed {format_rate(ref['value'])}: {verdict}",
                f"seed {format_rate(ref['value'])} {ref['unit']} vs mcpfast {got}  "
                f"({ref['source']}: \"{ref['claim']}\", measured on {ref['measured']})", verdict))
    return marks


# --- rendering -----------------------------------------------------------------------------

LABEL_WIDTH = 34


def _render_case(case: CaseResult, marks: list[Mark]) -> list[str]:
    lines = [f"{case.title}   [{case.case}]"]
    for row in case.rows:
        label = "  " + row.label
        if not row.timed:
            lines.append(f"{label:<{LABEL_WIDTH}}  {_untimed_text(row)}")
            continue
        if row.impl == PRIMARY:
            versus = ""
        elif row.impl.startswith(PRIMARY):
            primary = case.primary
            # A variant of mcpfast (envelope only, with deadlines): its speed relative to the
            # main mcpfast row, > 1 being faster.
            versus = f"{primary.median / row.median:.2f}x mcpfast" if primary else ""
        else:
            ratio = case.speedup(row.impl)
            versus = "" if ratio is None else format_ratio(ratio)
        text = (f"{label:<{LABEL_WIDTH}}  {_median_text(case, row):>12} {format_spread(row):>7}"
                f"  {_rate_text(case, row):>30}  {versus:>15}")
        row_marks = [m for m in marks if m.case == case.case and m.impl == row.impl]
        if row_marks:
            text += "  " + "; ".join(m.short for m in row_marks)
        lines.append(text.rstrip())
    return lines


E2E_METRICS = ("rt", "p50", "p99", "cpu")


def _render_e2e_block(title: str, by_metric: dict[str, CaseResult], marks: list[Mark]) -> list[str]:
    """One transport and load: a row per pair with round trips/s, p50, p99, CPU and speed-up."""
    rt = by_metric.get("rt")
    base = rt or next(iter(by_metric.values()))
    lines = [f"{title}   [{base.case.rsplit('/', 1)[0]}/*]"]
    for row in base.rows:
        label = "  " + row.label
        if not row.timed:
            lines.append(f"{label:<{LABEL_WIDTH}}  {_untimed_text(row)}")
            continue
        cells = []
        rate = rt.rate(row) if rt else None
        cells.append(f"{format_rate(rate) + ' rt/s' if rate else '':>12} {format_spread(row):>7}")
        for metric in ("p50", "p99"):
            case = by_metric.get(metric)
            other = case.row(row.impl) if case else None
            cells.append(f"{format_seconds(other.median) if other and other.timed else '':>9}")
        case = by_metric.get("cpu")
        other = case.row(row.impl) if case else None
        cells.append(f"{f'{other.median * 1000:.3g}' if other and other.timed else '':>9}")
        ratio = rt.speedup(row.impl) if rt and row.impl != PRIMARY else None
        cells.append(f"{format_ratio(ratio) if ratio is not None else '':>15}")
        text = f"{label:<{LABEL_WIDTH}}  " + " ".join(cells)
        row_marks = [m for m in marks if rt and m.case == rt.case and m.impl == row.impl]
        if row_marks:
            text += "  " + "; ".join(m.short for m in row_marks)
        lines.append(text.rstrip())
    return lines


def render(directory: str, references: list[dict] | None = None) -> str:
    cases = load_results(directory)
    if references is None:
        references = load_references()
    marks = evaluate(cases, references)
    lines = []
    run_info = os.path.join(directory, "run.json")
    if os.path.exists(run_info):
        with open(run_info, encoding="utf-8") as f:
            info = json.load(f)
        lines.append(f"mcpfast benchmarks  {info.get('started', '')}  mode: {info.get('mode', '?')}  "
                     f"python {info.get('python', '?')}  cpus: {info.get('cpus', '?')}  "
                     f"load average at start: {info.get('load_average', '?')}")
        versions = info.get("versions")
        if versions:
            lines.append("versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
        if info.get("compiled"):
            lines.append(f"compiled modules: {info['compiled']}")
    lines.append(f"results: {directory}")
    lines.append("median (±stdev as % of median), rate, and mcpfast's speed-up over each peer "
                 "(peer time / mcpfast time; > 1: mcpfast is faster).")
    lines.append("The machine is shared and noisy: ratios from the same run are the headline.")
    header = (f"{'  implementation':<{LABEL_WIDTH}}  {'median':>12} {'spread':>7}  {'rate':>30}  "
              f"{'mcpfast speed-up':>15}")
    e2e_header = (f"{'  implementation':<{LABEL_WIDTH}}  {'round trips':>12} {'spread':>7} "
                  f"{'p50':>9} {'p99':>9} {'CPU s/1k':>9} {'speed-up (rt)':>15}")
    # Sections in run order: a case, or for e2e one block per transport and load.
    sections: dict[str, list[CaseResult]] = {}
    for case in cases:
        key = case.case.rsplit("/", 1)[0] if case.group == "e2e" else case.case
        sections.setdefault(key, []).append(case)
    group = None
    for members in sections.values():
        if members[0].group != group:
            group = members[0].group
            head = e2e_header if group == "e2e" else header
            lines += ["", "=" * len(header), group, head, "-" * len(header)]
        if group == "e2e":
            by_metric = {case.case.rsplit("/", 1)[1]: case for case in members}
            lines += _render_e2e_block(members[0].title.rsplit(":", 1)[0], by_metric, marks)
        else:
            lines += _render_case(members[0], marks)

    lines += ["", "Targets"]
    for mark in marks:
        if mark.short.startswith("target"):
            lines.append(f"  [{mark.verdict:>5}] {mark.case}: {mark.text}")
    lines += ["", "Seed reference numbers (claims of the seed design for erlmcp, not measured here)"]
    for ref in references:
        lines.append(f"  {ref['claim']} -- {ref['source']}; measured on {ref['measured']}; "
                     f"compared with {ref['comparison']}:")
        for mark in marks:
            if mark.short.startswith("seed") and mark.case in ref["compared_with"]:
                lines.append(f"    [{mark.verdict:>5}] {mark.case}: {mark.text.split('  (')[0]}")
    wrong = [row for case in cases for row in case.rows if row.status == harness.WRONG]
    if wrong:
        lines += ["", "Not timed because the result was wrong:"]
        lines += [f"  {row.name}: {row.detail}" for row in wrong]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m bench.report RESULTS_DIR", file=sys.stderr)
        return 2
    sys.stdout.write(render(argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
