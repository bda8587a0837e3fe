"""Draw the comparison table of a results directory as a PNG bar chart (for the README).

    python -m bench.plot [RESULTS_DIR ...] [-o bench/chart.png]

RESULTS_DIR defaults to bench/results/latest; several directories are drawn together (e.g. a
quick run and an ``--only e2e`` run).  Top: codec decode and encode throughput (ops/s,
log scale) of every library per fixture.  Bottom: mcpfast's speed-up over the baseline of each
framing, pending and end-to-end case (log scale; the dashed line is parity).
"""

from __future__ import annotations

import argparse
import os
import sys

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench import report

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
DEFAULT_RESULTS = os.path.join(BENCH_DIR, "results", "latest")
DEFAULT_OUTPUT = os.path.join(BENCH_DIR, "chart.png")

FIXTURE_LABELS = {
    "call_request": "tools/call\nrequest",
    "call_response": "tools/call\nresponse",
    "progress": "progress\nnotification",
    "tools_list": "tools/list\n10 KB",
    "batch10": "batch of\n10 requests",
}
LIBRARY_STYLE = {  # key: (legend label, colour)
    "mcpfast": ("mcpfast", "#d62728"),
    "mcpfast-envelope": ("mcpfast, envelope only", "#ff9896"),
    "json": ("json (stdlib)", "#7f7f7f"),
    "orjson": ("orjson", "#1f77b4"),
    "msgspec": ("msgspec", "#2ca02c"),
    "msgspec-typed": ("msgspec Struct", "#98df8a"),
    "pysimdjson": ("pysimdjson", "#9467bd"),
    "simdjson-parse": ("simdjson parse only (floor)", "#c5b0d5"),
    "mcp-sdk": ("official mcp SDK (pydantic)", "#8c564b"),
}


def _codec_panel(ax, cases: dict[str, report.CaseResult], op: str) -> None:
    import numpy as np

    fixtures = [key for key in FIXTURE_LABELS if f"codec/{op}/{key}" in cases]
    libraries = [key for key in LIBRARY_STYLE
                 if any((c := cases[f"codec/{op}/{f}"]).row(key) and c.row(key).timed for f in fixtures)]
    if not fixtures or not libraries:
        ax.set_visible(False)
        return
    width = 0.8 / len(libraries)
    x = np.arange(len(fixtures))
    for i, lib in enumerate(libraries):
        rates = []
        for fixture in fixtures:
            case = cases[f"codec/{op}/{fixture}"]
            row = case.row(lib)
            rates.append(case.rate(row) if row is not None and row.timed else 0.0)
        label, colour = LIBRARY_STYLE[lib]
        heights = [r if r else np.nan for r in rates]
        positions = x - 0.4 + width * (i + 0.5)
        ax.bar(positions, heights, width, label=label, color=colour,
               edgecolor="black" if lib == "mcpfast" else "none", linewidth=0.6)
        for position, fixture in zip(positions, fixtures):
            row = cases[f"codec/{op}/{fixture}"].row(lib)
            if row is not None and not row.timed:
                # Absent (no such operation) or not timed (wrong result): say so where the bar would be.
                word = "wrong" if row.status == "wrong" else "n/a"
                ax.annotate(word, (position, 0), xycoords=("data", "axes fraction"), xytext=(0, 4),
                            textcoords="offset points", ha="center", va="bottom", rotation=90,
                            fontsize=7, color=colour)
    ax.set_yscale("log")
    bottom, top = ax.get_ylim()
    ax.set_ylim(bottom, top * 12)  # headroom for the legend
    ax.set_xticks(x)
    ax.set_xticklabels([FIXTURE_LABELS[f] for f in fixtures])
    ax.set_ylabel("operations / s (log)")
    ax.set_title(f"{op}: parse and read id, method, params/result" if op == "decode"
                 else "encode: id, method, params/result to wire bytes")
    ax.grid(axis="y", which="major", alpha=0.3)


def _short_title(case: report.CaseResult) -> str | None:
    """A one-line name for the speed-up panel; None for cases the panel leaves out."""
    parts = case.case.split("/")
    if case.group == "framing":
        return "framing a mixed stream"
    if case.group == "pending":
        return f"pending add + pop, {parts[-1].replace('in_flight_', '')} in flight"
    if case.group == "e2e" and parts[-1] == "rt":
        load = parts[2].replace("in_flight_", "")
        load = "sequential" if load == "1" else f"{load} in flight"
        return f"e2e {parts[1]}, {load}: round trips/s"
    return None


def _speedup_entries(cases: list[report.CaseResult]) -> list[tuple[str, float]]:
    entries = []
    for case in cases:
        title = _short_title(case)
        if title is None:
            continue
        for row in case.rows:
            if row.impl.startswith(report.PRIMARY):
                continue
            ratio = case.speedup(row.impl)
            if ratio is not None:
                entries.append((f"{title}\nvs {row.label}", ratio))
    return entries


def draw(directories: list[str], output: str) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cases = [case for directory in directories for case in report.load_results(directory)]
    by_name = {case.case: case for case in cases}
    entries = _speedup_entries(cases)
    fig = plt.figure(figsize=(14, 13 if entries else 9.5), dpi=100)
    grid = fig.add_gridspec(3 if entries else 2, 1, height_ratios=[1, 1, 0.9][: 3 if entries else 2])
    decode_ax = fig.add_subplot(grid[0])
    encode_ax = fig.add_subplot(grid[1])
    _codec_panel(decode_ax, by_name, "decode")
    _codec_panel(encode_ax, by_name, "encode")
    handles, labels = decode_ax.get_legend_handles_labels()
    if handles:
        decode_ax.legend(handles, labels, ncol=4, fontsize=9, loc="upper right")
    if entries:
        ax = fig.add_subplot(grid[2])
        names = [name for name, _ in entries]
        ratios = [ratio for _, ratio in entries]
        colours = ["#d62728" if r >= 1 else "#7f7f7f" for r in ratios]
        ax.barh(range(len(entries)), ratios, color=colours)
        ax.set_yticks(range(len(entries)))
        ax.set_yticklabels(names, fontsize=8)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.axvline(1.0, color="black", linestyle="--", linewidth=1)
        for i, ratio in enumerate(ratios):
            ax.text(ratio, i, f" {ratio:.3g}x", va="center", fontsize=8)
        ax.set_xlabel("mcpfast speed-up (baseline time / mcpfast time, log; > 1: mcpfast faster)")
        ax.set_title("framing, pending requests, end to end")
        ax.grid(axis="x", alpha=0.3)
    stamps = ", ".join(os.path.basename(os.path.realpath(d)) for d in directories)
    fig.suptitle(f"mcpfast vs peers measured in the same run ({stamps}); higher is better",
                 fontsize=13)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(output)
    plt.close(fig)
    return output


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="*", default=[DEFAULT_RESULTS],
                        help="results directories (default: bench/results/latest)")
    parser.add_argument("-o", "--output", default=DEFAULT_OUTPUT, help="PNG to write")
    args = parser.parse_args(argv)
    for directory in args.results:
        if not os.path.isdir(directory):
            print(f"no results directory {directory}: run scripts/bench first", file=sys.stderr)
            return 1
    print(draw(args.results, args.output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
