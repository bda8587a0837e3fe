"""The sdist carries everything a build needs and nothing else; its metadata says what is tested.

The sdist is built with setuptools' PEP 517 hook in the work tree, where the generated C++
and the compiled modules lie beside the sources (they must stay out). Building the wheels
and installing them is scripts/wheels' work (minutes per version), run by .ci/run.
"""

import email
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CHECKER = REPO / "scripts" / "sdist_contents.py"
TESTED_PYTHONS = ["3.10", "3.11", "3.12", "3.13"]


@pytest.fixture(scope="module")
def sdist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sdist")
    build = subprocess.run(
        [sys.executable, "-c", f"from setuptools import build_meta; print(build_meta.build_sdist({str(out)!r}))"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    return out / build.stdout.strip().splitlines()[-1]


def check(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(CHECKER), str(path)], capture_output=True, text=True, timeout=120)


def test_sdist_holds_the_sources_headers_and_license_and_nothing_built(sdist):
    run = check(sdist)
    assert run.returncode == 0, run.stdout + run.stderr
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
    top = sdist.name.removesuffix(".tar.gz")
    for needed in (
        "mcpfast/_core/decode.pyx",
        "mcpfast/_core/decode.pxd",
        "mcpfast/_core/decode.pyi",
        "include/mcpfast/pending.h",
        "setup.py",
        "LICENSE",
    ):
        assert f"{top}/{needed}" in names
    assert not [n for n in names if n.endswith((".cpp", ".so")) or "/tests/" in n or "/build/" in n]


def test_checker_names_what_is_missing_and_what_is_extra(sdist, tmp_path):
    top = sdist.name.removesuffix(".tar.gz")
    bad = tmp_path / sdist.name
    with tarfile.open(sdist) as good, tarfile.open(bad, "w:gz") as archive:
        for member in good.getmembers():
            if member.name != f"{top}/mcpfast/_core/framing.pyx":
                archive.addfile(member, good.extractfile(member) if member.isfile() else None)
        extra = tmp_path / "framing.cpp"
        extra.write_text("// generated\n")
        archive.add(extra, arcname=f"{top}/mcpfast/_core/framing.cpp")
    run = check(bad)
    assert run.returncode != 0
    assert "missing: mcpfast/_core/framing.pyx" in run.stderr
    assert "not part of a build: mcpfast/_core/framing.cpp" in run.stderr


def test_metadata_names_the_tested_pythons_platform_and_license(sdist):
    with tarfile.open(sdist) as archive:
        handle = archive.extractfile(f"{sdist.name.removesuffix('.tar.gz')}/PKG-INFO")
        assert handle is not None
        info = email.message_from_bytes(handle.read())
    classifiers = info.get_all("Classifier")
    versions = [
        c.rsplit(" ", 1)[1] for c in classifiers if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    ]
    assert versions == TESTED_PYTHONS
    assert info["Requires-Python"] == f">={TESTED_PYTHONS[0]}"
    assert "Operating System :: POSIX :: Linux" in classifiers
    assert "Typing :: Typed" in classifiers and "Framework :: AsyncIO" in classifiers
    assert info["License-Expression"] == "MIT" and info["License-File"] == "LICENSE"
