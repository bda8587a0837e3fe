"""scripts/build_inputs.py: when the compiled modules count as built from the inputs there
are now (scripts/build --if-changed skips the build then), and pyproject.toml's lists read
without tomllib (Python 3.10).

The stamp cases run the script in a subprocess on a small tree made for each case: a
compiled source, a header, a setup.py naming one module and that module's file.
"""

import importlib.util
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # 3.11+; the reader below is what 3.10 uses

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "build_inputs.py"
SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")

spec = importlib.util.spec_from_file_location("build_inputs", SCRIPT)
build_inputs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build_inputs)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "build_inputs.py").write_bytes(SCRIPT.read_bytes())
    (tmp_path / "mcpfast" / "_core").mkdir(parents=True)
    (tmp_path / "mcpfast" / "_core" / "codec.pyx").write_text("def f(): pass\n")
    (tmp_path / "mcpfast" / "_core" / "helper.py").write_text("X = 1\n")
    (tmp_path / "mcpfast" / "_core" / ("codec" + SUFFIX)).write_bytes(b"built once")
    (tmp_path / "include" / "mcpfast").mkdir(parents=True)
    (tmp_path / "include" / "mcpfast" / "compat.h").write_text("#define A 1\n")
    (tmp_path / "setup.py").write_text('EXTENSIONS = [\n    ext("mcpfast._core.codec"),\n]\n')
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "pgo_train.py").write_text("pass\n")
    return tmp_path


def run(tree: Path, *args: str, **env: str) -> int:
    return subprocess.run([sys.executable, "scripts/build_inputs.py", *args], cwd=tree,
                          env={"PATH": "/usr/bin:/bin", **env}, timeout=60).returncode


def test_modules_are_current_only_after_a_build_recorded_them(tree):
    assert run(tree, "current", "plain") == 1  # nothing recorded yet
    assert run(tree, "record", "plain") == 0
    assert run(tree, "current", "plain") == 0
    assert run(tree, "current", "pgo") == 1  # a plain build is no profile-guided one
    assert run(tree, "record", "pgo") == 0
    assert run(tree, "current", "pgo") == 0
    assert run(tree, "current", "plain") == 0  # and a profile-guided one serves for plain


@pytest.mark.parametrize("change", ["pyx", "header", "setup", "module replaced", "module gone",
                                    "switch", "only"])
def test_a_changed_input_or_module_makes_them_out_of_date(tree, change):
    assert run(tree, "record", "plain") == 0
    env = {}
    if change == "pyx":
        (tree / "mcpfast" / "_core" / "codec.pyx").write_text("def f(): return 1\n")
    elif change == "header":
        (tree / "include" / "mcpfast" / "compat.h").write_text("#define A 2\n")
    elif change == "setup":
        (tree / "setup.py").write_text('EXTENSIONS = [\n    ext("mcpfast._core.codec"),  # -O2\n]\n')
    elif change == "module replaced":  # e.g. by an install that compiled its own
        (tree / "mcpfast" / "_core" / ("codec" + SUFFIX)).write_bytes(b"built again")
    elif change == "module gone":
        (tree / "mcpfast" / "_core" / ("codec" + SUFFIX)).unlink()
    elif change == "switch":
        env["MCPFAST_DEBUG"] = "1"
    else:
        env["MCPFAST_ONLY"] = "codec"  # a partial build is never taken for a whole one
    assert run(tree, "current", "plain", **env) == 1


def test_python_sources_and_the_training_run_of_a_plain_build_are_not_inputs(tree):
    assert run(tree, "record", "plain") == 0
    (tree / "mcpfast" / "_core" / "helper.py").write_text("X = 2\n")
    (tree / "bench" / "pgo_train.py").write_text("print('trained')\n")
    assert run(tree, "current", "plain") == 0
    assert run(tree, "record", "pgo") == 0
    (tree / "bench" / "pgo_train.py").write_text("print('trained again')\n")
    assert run(tree, "current", "pgo") == 1  # the profile came from another training run


def test_pyprojects_lists_read_without_tomllib_are_tomllibs():
    text = (REPO / "pyproject.toml").read_text()
    parsed = tomllib.loads(text)
    lists = {"build-system.requires": parsed["build-system"]["requires"],
             "project.dependencies": parsed["project"]["dependencies"]}
    for extra, pins in parsed["project"]["optional-dependencies"].items():
        lists[f"project.optional-dependencies.{extra}"] = pins
    for dotted, expected in lists.items():
        assert build_inputs.list_without_tomllib(text, dotted) == expected, dotted
    with pytest.raises(SystemExit, match="no project.nothing list"):
        build_inputs.list_without_tomllib(text, "project.nothing")
