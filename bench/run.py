"""Run the benchmark groups, save their pyperf JSON, print the comparison table.

    python -m bench.run [--quick] [--only codec|framing|pending|e2e|http] [--out DIR]
                        [--loop uvloop|asyncio]

Without --only, a full run times every group, end to end included; --quick times codec, framing
and pending with fewer processes and shorter values (under 2 minutes on a 2-core machine), and
e2e or http only when asked for with --only.  Results go to bench/results/<date-time>/ (git-ignored):
``<group>.json`` (pyperf; ``pyperf stats`` and ``pyperf compare_to`` read them),
``e2e-detail.json`` (pyperf: latencies and CPU of the e2e calls), ``status/<group>.json`` (what
was not timed and why), ``run.json`` and ``table.txt``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench import report

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
RESULTS_DIR = os.path.join(BENCH_DIR, "results")
GROUPS = ("codec", "framing", "pending", "e2e", "http")
VERSIONS_OF = ("mcpfast", "pyperf", "orjson", "msgspec", "pysimdjson", "mcp", "pydantic", "pydantic-core")
QUICK_GROUPS = ("codec", "framing", "pending")

# pyperf options per group and mode.  Full runs keep pyperf's 3 values per process and 100 ms
# values; codec uses 10 processes rather than 20 because it has ~70 benchmarks.  Quick runs use
# one process with six short values: ratios stay meaningful, spreads get wider.
PYPERF_ARGS = {
    ("codec", "full"): ["--processes", "10"],
    ("framing", "full"): [],
    ("pending", "full"): [],
    ("e2e", "full"): [],  # bench_e2e.py's own defaults: 2 processes, 3 values of 250 ms
    ("codec", "quick"): ["--processes", "1", "--values", "6", "--min-time", "0.01"],
    ("framing", "quick"): ["--processes", "1", "--values", "6", "--min-time", "0.03"],
    ("pending", "quick"): ["--processes", "1", "--values", "6", "--min-time", "0.01"],
    ("e2e", "quick"): ["--processes", "1", "--values", "2", "--min-time", "0.1"],
    # bench_http.py: wrk runs of --duration seconds, one server process per implementation,
    # the implementations of a row timed in turn (an odd count: the median is one round's).
    ("http", "full"): ["--values", "7", "--duration", "2"],
    ("http", "quick"): ["--values", "3", "--duration", "1"],
}
# A whole group is stopped after this long (a hung server or extension fails, never stalls).
GROUP_TIMEOUT = {"full": 3 * 3600, "quick": 1200}
# One pyperf worker process is stopped after this long.
WORKER_TIMEOUT = {"full": 900, "quick": 300}


def groups_to_run(quick: bool, only: str | None) -> tuple[str, ...]:
    if only:
        return (only,)
    return QUICK_GROUPS if quick else GROUPS


def group_command(group: str, mode: str, out_dir: str, loop: str | None = None) -> list[str]:
    return [
        sys.executable, os.path.join(BENCH_DIR, f"bench_{group}.py"),
        "--quiet",
        "--timeout", str(WORKER_TIMEOUT[mode]),
        "-o", os.path.join(out_dir, f"{group}.json"),
        "--status-output", os.path.join(out_dir, "status", f"{group}.json"),
        *(["--detail-output", os.path.join(out_dir, f"{group}-detail.json")] if group == "e2e" else []),
        *(["--loop", loop] if group == "e2e" and loop else []),
        *PYPERF_ARGS[(group, mode)],
    ]


def installed_versions() -> dict[str, str]:
    import importlib.metadata

    versions = {}
    for name in VERSIONS_OF:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def compiled_build() -> str:
    """Which build of the compiled modules is timed: the profile-guided one scripts/build
    --pgo made (its modules unchanged since), else a plain one."""
    import hashlib
    import sysconfig

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    profile = os.path.join(root, "build", "pgo", sysconfig.get_config_var("EXT_SUFFIX").strip(".").rsplit(".", 1)[0])
    try:
        with open(os.path.join(profile, "modules.sha256"), encoding="utf-8") as f:
            recorded = [line.split() for line in f if line.strip()]
    except OSError:
        return "plain (-O3)"
    for digest, path in recorded:
        try:
            with open(os.path.join(root, path), "rb") as module:
                if hashlib.sha256(module.read()).hexdigest() != digest:
                    return "plain (-O3; rebuilt since the profile-guided build)"
        except OSError:
            return "plain (-O3; a module of the profile-guided build is gone)"
    return "profile-guided (scripts/build --pgo)" if recorded else "plain (-O3)"


def new_results_dir() -> str:
    stamp = datetime.datetime.now().strftime("%Y-%m-%d_%H%M%S")
    path = os.path.join(RESULTS_DIR, stamp)
    os.makedirs(os.path.join(path, "status"))
    return path


def _point_latest_at(path: str) -> None:
    link = os.path.join(RESULTS_DIR, "latest")
    tmp = link + f".{os.getpid()}"
    os.symlink(os.path.basename(path), tmp)
    os.replace(tmp, link)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="fewer processes and shorter values; without --only: no e2e group")
    parser.add_argument("--only", choices=GROUPS, help="run just this group")
    parser.add_argument("--out", metavar="DIR", help="results directory (default: a new "
                        "bench/results/<date-time>/)")
    parser.add_argument("--loop", choices=("uvloop", "asyncio"),
                        help="event loop of the end-to-end clients (default: uvloop when installed)")
    args = parser.parse_args(argv)

    mode = "quick" if args.quick else "full"
    out_dir = os.path.abspath(args.out) if args.out else new_results_dir()
    os.makedirs(os.path.join(out_dir, "status"), exist_ok=True)
    groups = groups_to_run(args.quick, args.only)
    existing = [g for g in groups if os.path.exists(os.path.join(out_dir, f"{g}.json"))]
    if existing:
        parser.error(f"{out_dir} already holds results of {', '.join(existing)}: choose another --out")
    info = {
        "started": datetime.datetime.now().isoformat(timespec="seconds"),
        "mode": mode,
        "groups": list(groups),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "load_average": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "versions": installed_versions(),
        "compiled": compiled_build(),
        "e2e_loop": args.loop or "uvloop (when installed)",
        "group_results": {},
    }
    print(f"compiled modules: {info['compiled']}", flush=True)
    started = time.monotonic()
    failed = []
    for group in groups:
        print(f"== {group} ({mode})", flush=True)
        group_started = time.monotonic()
        try:
            completed = subprocess.run(group_command(group, mode, out_dir, args.loop),
                                       timeout=GROUP_TIMEOUT[mode])
            outcome = "ok" if completed.returncode == 0 else f"failed with exit status {completed.returncode}"
        except subprocess.TimeoutExpired:
            outcome = f"stopped after {GROUP_TIMEOUT[mode]} s"
        if outcome != "ok":
            failed.append(group)
            print(f"== {group}: {outcome}", file=sys.stderr, flush=True)
        info["group_results"][group] = {
            "outcome": outcome, "seconds": round(time.monotonic() - group_started, 1)}
    info["seconds"] = round(time.monotonic() - started, 1)
    with open(os.path.join(out_dir, "run.json"), "w", encoding="utf-8") as f:
        json.dump(info, f, indent=1)
        f.write("\n")
    if not args.out:
        _point_latest_at(out_dir)

    table = report.render(out_dir)
    with open(os.path.join(out_dir, "table.txt"), "w", encoding="utf-8") as f:
        f.write(table)
    print()
    print(table, end="")
    print(f"\n{len(groups)} group(s) in {info['seconds']:.0f} s; results in {out_dir}")
    if failed:
        print(f"groups that did not complete: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
