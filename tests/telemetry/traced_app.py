"""The server of the telemetry tests: served in-process and on every socket transport by
tests/telemetry/test_spans.py, and, run as a script, over stdio with the OpenTelemetry
SDK configured in that process, each finished span written as one JSON line to the file
``TRACED_SPANS`` names (so the test process can read what the server recorded)."""

from __future__ import annotations

import json
import os
from typing import Any, Sequence

from mcpfast import Context, Server

CONFIRM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}


def make_app() -> Server:
    app = Server("traced", task_poll_interval_ms=20)

    @app.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @app.tool()
    def fails() -> str:
        raise RuntimeError("the tool broke")

    @app.tool()
    async def asks(ctx: Context) -> str:
        answer = await ctx.elicit("Sure?", CONFIRM)
        return f"confirmed {answer.content['confirm']}"

    @app.tool()
    async def counts(ctx: Context, steps: int = 3) -> int:
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
        return steps

    @app.tool(task_support="optional")
    async def slow() -> str:
        return "done as a task"

    @app.resource("memo://note")
    def note() -> str:
        return "note"

    @app.prompt()
    def greet(who: str) -> str:
        return f"Hello {who}"

    return app


def _span_record(span: Any) -> dict:
    context = span.get_span_context()
    return {
        "name": span.name, "kind": span.kind.name, "trace_id": context.trace_id,
        "span_id": context.span_id, "parent": span.parent.span_id if span.parent else None,
        "attributes": dict(span.attributes), "status": span.status.status_code.name,
    }


def _configure_sdk(path: str) -> None:
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

    class LinesExporter(SpanExporter):
        def export(self, spans: Sequence[Any]) -> SpanExportResult:
            with open(path, "a", encoding="utf-8") as out:
                for span in spans:
                    out.write(json.dumps(_span_record(span)) + "\n")
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(LinesExporter()))
    trace.set_tracer_provider(provider)


# For `mcpfast run tests/telemetry/traced_app.py` (the metrics tests).
app = make_app()


if __name__ == "__main__":
    _configure_sdk(os.environ["TRACED_SPANS"])
    make_app().run("stdio")
