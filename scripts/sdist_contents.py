"""Check an sdist against the repository: everything a build needs, nothing else.

    python scripts/sdist_contents.py dist/mcpfast-X.Y.Z.tar.gz

Needed (each tracked by git): every file under include/ and mcpfast/ (headers, .py, .pyx,
.pxd, .pyi, py.typed) and the top-level build and description files. Allowed besides: the
metadata the sdist build writes (PKG-INFO, setup.cfg, mcpfast.egg-info/). Anything else --
generated C++, compiled modules, build/, .venv, tests, an untracked file -- is an error.
Prints what it checked; exits non-zero naming every missing and every extra file.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NEEDED_TREES = ("include/", "mcpfast/")
NEEDED_FILES = ("pyproject.toml", "setup.py", "README.md", "LICENSE", "MANIFEST.in")
METADATA_FILES = ("PKG-INFO", "setup.cfg")
METADATA_TREE = "mcpfast.egg-info/"


def needed_files() -> set[str]:
    """The tracked files a build from the sdist needs, relative to the repository root."""
    tracked = (
        subprocess.run(["git", "ls-files", "-z"], cwd=REPO, check=True, capture_output=True).stdout.decode().split("\0")
    )
    needed = {name for name in tracked if name.startswith(NEEDED_TREES)}
    needed.update(NEEDED_FILES)
    return needed


def problems(sdist: Path) -> tuple[list[str], int]:
    """(one line per missing or extra file, how many files the sdist holds)."""
    with tarfile.open(sdist) as archive:
        members = [m for m in archive.getmembers() if not m.isdir()]
    top = sdist.name.removesuffix(".tar.gz") + "/"
    found: set[str] = set()
    lines = []
    for member in members:
        if not member.name.startswith(top):
            lines.append(f"outside the top folder {top}: {member.name}")
            continue
        found.add(member.name[len(top) :])
    needed = needed_files()
    lines += [f"missing: {name}" for name in sorted(needed - found)]
    lines += [
        f"not part of a build: {name}"
        for name in sorted(found - needed)
        if name not in METADATA_FILES and not name.startswith(METADATA_TREE)
    ]
    return lines, len(found)


def main(argv: list[str]) -> None:
    if len(argv) != 1:
        sys.exit("usage: sdist_contents.py SDIST.tar.gz")
    sdist = Path(argv[0])
    lines, count = problems(sdist)
    if lines:
        sys.exit(f"sdist_contents: {sdist.name} is not what a build needs:\n  " + "\n  ".join(lines))
    print(
        f"sdist_contents: {sdist.name}: {count} files, every tracked file under include/ and mcpfast/ "
        f"and {', '.join(NEEDED_FILES)}; nothing generated, nothing else"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
