"""The mcpfast command line: call, list, run (in process and as ``python -m mcpfast``)."""

import json
import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from mcpfast import cli
from mcpfast.client import connect_sync

ROOT = Path(__file__).resolve().parents[2]
EVERYTHING = ROOT / "examples" / "everything_server.py"
ECHO = ROOT / "examples" / "echo_server.py"


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _mcpfast(*args, timeout=60):
    """Run ``python -m mcpfast args...``; the CompletedProcess (text)."""
    return subprocess.run([sys.executable, "-m", "mcpfast", *args], capture_output=True,
                          text=True, timeout=timeout, env=_env(), cwd=ROOT)


# -- argument parsing ------------------------------------------------------------------------


@pytest.mark.parametrize("text, value", [
    ("3", 3), ("2.5", 2.5), ("true", True), ("null", None), ('"7"', "7"),
    ('["a", 1]', ["a", 1]), ('{"k": {"n": 1}}', {"k": {"n": 1}}),
    ("Ada", "Ada"), ("", ""), ("hello world", "hello world"), ("{not json", "{not json"),
    ("a=b", "a=b"),
])
def test_values_are_json_when_they_parse(text, value):
    assert cli.parse_value(text) == value


def test_arguments_merge_json_and_pairs():
    assert cli.parse_arguments(["a=1", "b=x", "c=a=b"]) == {"a": 1, "b": "x", "c": "a=b"}
    merged = cli.parse_arguments(["b=2"], '{"a": [1], "b": 1}')
    assert merged == {"a": [1], "b": 2}
    assert cli.parse_arguments([]) == {}


@pytest.mark.parametrize("pairs, base, match", [
    (["novalue"], None, "key=value"),
    (["=3"], None, "key=value"),
    ([], "{bad", "not valid JSON"),
    ([], "[1, 2]", "JSON object"),
])
def test_bad_arguments_are_usage_errors(pairs, base, match):
    with pytest.raises(cli.UsageError, match=match):
        cli.parse_arguments(pairs, base)


def test_server_targets():
    assert cli.server_target("tcp://127.0.0.1:9") == "tcp://127.0.0.1:9"
    assert cli.server_target("uvx some-server --x 'a b'") == ["uvx", "some-server", "--x", "a b"]
    # A first word naming a .py file runs it with this Python.
    assert cli.server_target(f"{ECHO} tcp 1") == [sys.executable, str(ECHO), "tcp", "1"]
    assert cli.server_target("missing.py") == ["missing.py"]
    with pytest.raises(cli.UsageError):
        cli.server_target("")
    with pytest.raises(cli.UsageError):
        cli.server_target("'unclosed")


# -- call and list, in process -----------------------------------------------------------------


def test_call_prints_the_result(capsys):
    status = cli.main(["call", str(ECHO), "echo", "text=hello"])
    assert status == 0
    assert json.loads(capsys.readouterr().out) == {"content": [{"type": "text", "text": "hello"}]}


def test_call_with_json_arguments(capsys):
    status = cli.main(["call", f"{sys.executable} {EVERYTHING}", "test_structured_output",
                       "--json", '{"city": "Oslo"}', "--timeout", "30"])
    assert status == 0
    assert json.loads(capsys.readouterr().out)["structuredContent"]["city"] == "Oslo"


def test_a_tool_error_result_exits_1(capsys):
    status = cli.main(["call", str(EVERYTHING), "test_error_handling"])
    assert status == 1
    assert json.loads(capsys.readouterr().out)["isError"] is True


def test_a_protocol_error_is_printed_as_json_on_stderr(capsys):
    status = cli.main(["call", str(ECHO), "nope"])
    assert status == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    error = json.loads(captured.err)["error"]
    assert error["code"] == -32602 and "nope" in error["message"]


def test_usage_errors_exit_2(capsys):
    assert cli.main(["call", str(ECHO), "echo", "oops"]) == 2
    assert "key=value" in capsys.readouterr().err
    assert cli.main(["call", str(ECHO), "echo", "--env", "NOEQUALS"]) == 2
    assert cli.main(["call", "tcp://127.0.0.1:1", "echo", "--cwd", "/"]) == 2
    with pytest.raises(SystemExit) as info:
        cli.main(["list", str(ECHO), "everything"])
    assert info.value.code == 2
    with pytest.raises(SystemExit):
        cli.main([])


def test_an_unreachable_websocket_server_exits_1(capsys):
    assert cli.main(["call", "ws://127.0.0.1:1/mcp", "echo"]) == 1
    assert "mcpfast:" in capsys.readouterr().err


def test_an_unstartable_server_exits_1(capsys):
    assert cli.main(["call", "mcpfast-no-such-program", "echo"]) == 1
    assert "cannot connect to 'mcpfast-no-such-program'" in capsys.readouterr().err


@pytest.mark.parametrize("kind, key, expected", [
    ("tools", "name", "test_simple_text"),
    ("resources", "uri", "test://static-text"),
    ("templates", "uriTemplate", "test://template/{id}/data"),
    ("prompts", "name", "test_simple_prompt"),
])
def test_list_prints_every_item(capsys, kind, key, expected):
    assert cli.main(["list", str(EVERYTHING), kind]) == 0
    items = json.loads(capsys.readouterr().out)
    assert expected in [item[key] for item in items]


def test_list_defaults_to_tools_and_passes_env(capsys, tmp_path):
    script = tmp_path / "envtool.py"
    script.write_text(textwrap.dedent("""
        import os
        from mcpfast.server import Server
        app = Server("env")

        @app.tool(name=os.environ["TOOL_NAME"])
        def tool() -> str:
            return os.getcwd()

        app.run("stdio")
    """))
    workdir = tmp_path / "wd"
    workdir.mkdir()
    status = cli.main(["list", f"{sys.executable} {script}", "--env", f"PYTHONPATH={ROOT}",
                       "--env", "TOOL_NAME=from_env", "--cwd", str(workdir)])
    assert status == 0
    assert [t["name"] for t in json.loads(capsys.readouterr().out)] == ["from_env"]
    status = cli.main(["call", str(script), "from_env", "--env", f"PYTHONPATH={ROOT}",
                       "--env", "TOOL_NAME=from_env", "--cwd", str(workdir)])
    assert status == 0
    assert json.loads(capsys.readouterr().out)["content"][0]["text"] == str(workdir)


# -- python -m mcpfast -------------------------------------------------------------------------


def test_python_dash_m_call_and_list():
    called = _mcpfast("call", str(ECHO), "echo", "text=from -m")
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout)["content"][0]["text"] == "from -m"
    listed = _mcpfast("list", str(ECHO))
    assert listed.returncode == 0
    assert [t["name"] for t in json.loads(listed.stdout)] == ["echo"]


SERVER_FILE = textwrap.dedent("""
    from mcpfast.server import Server
    from helper import GREETING   # a module next to this file

    app = Server("cli-run")
    other = Server("other")

    @app.tool()
    def greet(name: str) -> str:
        return f"{GREETING}, {name}"

    @other.tool()
    def other_tool() -> str:
        return "other"

    if __name__ == "__main__":
        raise SystemExit("run as a module by mcpfast run, never as __main__")
""")


@pytest.fixture
def server_file(tmp_path):
    (tmp_path / "helper.py").write_text('GREETING = "Hello"\n')
    path = tmp_path / "my_server.py"
    path.write_text(SERVER_FILE)
    return path


def test_run_serves_stdio(server_file):
    command = [sys.executable, "-m", "mcpfast", "run", str(server_file)]
    with connect_sync(command, env={"PYTHONPATH": str(ROOT)}) as client:
        assert client.server_info["name"] == "cli-run"
        result = client.call_tool("greet", {"name": "Ada"})
        assert result["content"][0]["text"] == "Hello, Ada"


def test_run_picks_the_named_object(server_file):
    command = [sys.executable, "-m", "mcpfast", "run", f"{server_file}:other",
               "--transport", "stdio"]
    with connect_sync(command, env={"PYTHONPATH": str(ROOT)}) as client:
        assert client.server_info["name"] == "other"


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_run_serves_tcp(server_file):
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "mcpfast", "run", str(server_file), "--transport", "tcp",
         "--host", "127.0.0.1", "--port", str(port)],
        env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                assert process.poll() is None, process.stderr.read().decode()
                assert time.monotonic() < deadline, "the TCP server did not start"
                time.sleep(0.05)
        with connect_sync(f"tcp://127.0.0.1:{port}") as client:
            assert client.call_tool("greet", {"name": "TCP"})["content"][0]["text"] == "Hello, TCP"
    finally:
        process.terminate()
        process.wait(10)
        process.stderr.close()


@pytest.mark.parametrize("transport", ["sse"])
def test_run_with_an_unavailable_transport_exits_2(server_file, transport):
    done = _mcpfast("run", str(server_file), "--transport", transport)
    assert done.returncode == 2
    assert f"the {transport} transport is not available yet" in done.stderr


def test_run_errors(tmp_path, capsys):
    assert cli.main(["run", str(tmp_path / "missing.py")]) == 2
    assert "no such file" in capsys.readouterr().err
    two = tmp_path / "two.py"
    two.write_text("from mcpfast.server import Server\na = Server('a')\nb = Server('b')\n")
    assert cli.main(["run", str(two)]) == 2
    assert "found 2 Server objects" in capsys.readouterr().err
    assert cli.main(["run", f"{two}:c"]) == 2
    assert "no object named 'c'" in capsys.readouterr().err
    none = tmp_path / "none.py"
    none.write_text("x = 1\n")
    assert cli.main(["run", str(none)]) == 2
    assert cli.main(["run", f"{none}:x"]) == 2
    assert "not an mcpfast Server" in capsys.readouterr().err
    assert cli.main(["run", str(two), "--transport", "stdio", "--port", "9"]) == 2


def test_load_server_prefers_the_conventional_names(tmp_path):
    path = tmp_path / "named.py"
    path.write_text("from mcpfast.server import Server\nextra = Server('extra')\n"
                    "mcp = Server('conventional')\n")
    assert cli.load_server(str(path)).name == "conventional"
    assert cli.load_server(f"{path}:extra").name == "extra"
    single = tmp_path / "single.py"
    single.write_text("from mcpfast.server import Server\nmy_only_server = Server('only')\n")
    assert cli.load_server(str(single)).name == "only"


def test_transport_availability():
    assert cli.transport_available("stdio") and cli.transport_available("tcp")


def test_run_http_says_where_and_fails_in_one_line_when_the_port_is_taken(server_file):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _mcpfast("run", str(server_file), "--transport", "http", "--port", str(port))
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"mcpfast: cannot serve on 127.0.0.1:{port}: ")
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("flags, message", [
    (["--port", "70000"], "--port must be in 0..65535"),
    (["--transport", "tcp", "--stateless"], "--stateless applies to the http transport"),
    (["--transport", "http", "--path", "mcp"], "--path must start with '/'"),
])
def test_run_refuses_bad_network_flags(server_file, flags, message):
    done = _mcpfast("run", str(server_file), *flags)
    assert done.returncode == 2 and message in done.stderr


def test_version_prints_the_package_version(capsys):
    import mcpfast

    with pytest.raises(SystemExit) as info:
        cli.main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"mcpfast {mcpfast.__version__}"
