"""Shared plumbing of the bench_*.py scripts: cases, checks before timing, lazy set-up, pyperf.

Every benchmark script builds a list of ``Case`` objects and hands it to ``run``.  pyperf's
Runner then works as usual -- the manager process spawns one worker process per benchmark (and
a calibration one), each worker re-runs the script and times only its own task -- with three
additions:

- Checks: the manager runs every case's ``check`` first.  A case whose check fails (wrong output,
  library missing, operation unsupported) is not timed; its status and the reason go to the status
  file (``--status-output``) so the report can say why the row is missing.
- Lazy set-up: a worker prepares (imports the library, builds the callable, starts a server) only
  the case it times, so a worker's start-up does not pay for every library in the suite and
  nothing of the set-up falls inside a timed region.
- The manager tells workers which cases it excluded (``--exclude``), so the manager's and the
  workers' task numbering stay the same.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable

OK = "ok"
UNAVAILABLE = "unavailable"
UNSUPPORTED = "unsupported"
WRONG = "wrong"

DISPLAY_OPS = "ops"          # value: seconds per operation; shown as time and ops/s
DISPLAY_STREAM = "stream"    # value: seconds per pass over a stream; shown as MB/s and frames/s
DISPLAY_CALLS = "calls"      # value: seconds per round trip; shown as round trips/s
DISPLAY_LATENCY = "latency"  # value: a latency percentile in seconds
DISPLAY_CPU = "cpu"          # value: CPU seconds per call; shown per 1,000 calls

# Metadata of a benchmark whose value i was timed in round i of rounds it shared with the
# other implementations of its case, in turn (1); the report pairs them by round.
PAIRED_ROUNDS = "paired_rounds"


@dataclass
class Case:
    """One benchmark: a pyperf name ``group/.../impl`` plus how to check, prepare and time it.

    ``check()`` returns ``(status, detail)``; only ``OK`` cases are timed.  ``prepare()`` returns
    ``(time_func, args)`` for ``Runner.bench_time_func``; it runs in the worker that times the
    case, never in the manager.
    """

    name: str
    impl_label: str
    case_title: str
    check: Callable[[], tuple[str, str]]
    prepare: Callable[[], tuple[Callable[..., float], tuple]]
    display: str = DISPLAY_OPS
    inner_loops: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def case(self) -> str:
        return self.name.rsplit("/", 1)[0]

    @property
    def impl(self) -> str:
        return self.name.rsplit("/", 1)[1]

    def pyperf_metadata(self) -> dict[str, Any]:
        meta = {
            "impl_label": self.impl_label,
            "case_title": self.case_title,
            "display": self.display,
        }
        meta.update(self.metadata)
        return meta


def time_calls(loops: int, op: Callable[[], object]) -> float:
    """Seconds taken by ``loops`` calls of ``op`` (the loop of timeit: no per-call bookkeeping)."""
    calls = itertools.repeat(None, loops)
    clock = time.perf_counter
    start = clock()
    for _ in calls:
        op()
    return clock() - start


def make_runner(extra_options: dict[str, dict[str, Any]] | None = None, **defaults: Any):
    """A pyperf Runner with the harness's options (and ``extra_options``: flag -> argparse
    keywords, each a string option), all forwarded to the workers it spawns."""
    import pyperf

    forwarded = {"--exclude": "exclude", "--match": "match"}
    for flag in extra_options or {}:
        forwarded[flag] = flag.lstrip("-").replace("-", "_")

    def forward(cmd: list[str], args: Any) -> None:
        for flag, dest in forwarded.items():
            value = getattr(args, dest)
            if value:
                cmd.extend((flag, value))

    runner = pyperf.Runner(add_cmdline_args=forward, **defaults)
    runner.argparser.add_argument(
        "--status-output", metavar="FILE",
        help="write each case's check status (timed / wrong / unavailable / unsupported) as JSON")
    runner.argparser.add_argument(
        "--match", metavar="REGEX", default="",
        help="time only the cases whose name matches this regular expression")
    runner.argparser.add_argument(
        "--exclude", default="", help=argparse.SUPPRESS)  # set by the manager for its workers
    for flag, options in (extra_options or {}).items():
        runner.argparser.add_argument(flag, default="", **options)
    return runner


def run(runner: Any, group: str, cases: list[Case]) -> None:
    """Check (manager), then register every case with ``runner`` (see the module docstring)."""
    args = runner.parse_args()
    if args.match:
        pattern = re.compile(args.match)
        cases = [case for case in cases if pattern.search(case.name)]
    names = [case.name for case in cases]
    if len(set(names)) != len(names):
        raise ValueError(f"duplicate case names in group {group}")

    if not args.worker:
        statuses = []
        excluded = []
        reasons: dict[tuple[str, str], int] = {}
        for case in cases:
            status, detail = case.check()
            statuses.append({
                "name": case.name,
                "case": case.case,
                "impl": case.impl,
                "impl_label": case.impl_label,
                "case_title": case.case_title,
                "display": case.display,
                "status": status,
                "detail": detail,
            })
            if status != OK:
                excluded.append(case.name)
                if status == WRONG:
                    print(f"NOT TIMED, wrong result: {case.name}: {detail}", file=sys.stderr)
                else:
                    reasons[(status, detail)] = reasons.get((status, detail), 0) + 1
        for (status, detail), count in reasons.items():
            print(f"not timed ({count} case{'s' if count > 1 else ''}): {status}: {detail}",
                  file=sys.stderr)
        args.exclude = ",".join(excluded)
        if args.status_output:
            write_status(args.status_output, group, statuses)
        if len(excluded) == len(cases):
            # pyperf writes no output file when nothing is registered; the report relies on the
            # status file alone for this group.
            return

    excluded = set(filter(None, args.exclude.split(",")))
    timed = [case for case in cases if case.name not in excluded]
    for index, case in enumerate(timed):
        if args.worker and args.worker_task in (None, index):
            time_func, func_args = case.prepare()
        else:
            # Only the worker timing this case needs its callable: pyperf skips the others there,
            # and the manager only spawns workers.
            time_func, func_args = _prepared_elsewhere, ()
        runner.bench_time_func(
            case.name, time_func, *func_args,
            inner_loops=case.inner_loops, metadata=case.pyperf_metadata())


def _prepared_elsewhere(loops: int) -> float:
    raise RuntimeError("this case is prepared and timed only in its own pyperf worker process")


def write_status(path: str, group: str, statuses: list[dict]) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"group": group, "cases": statuses}, f, indent=1)
        f.write("\n")
