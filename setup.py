"""Build the compiled core of mcpfast.

simdjson is never vendored: its amalgamated simdjson.cpp / simdjson.h are taken from the
installed pysimdjson package folder (a build requirement), compiled once into an object file
cached under build/ (keyed by simdjson version, compiler and flags) and linked into the
extensions that parse JSON.  MCPFAST_SIMDJSON=system uses a system simdjson found by
pkg-config instead (Debian: libsimdjson-dev).

Environment switches:
  MCPFAST_SIMDJSON=system   link the system simdjson (pkg-config) instead of pysimdjson's copy
  MCPFAST_ANNOTATE=1        write Cython annotation HTML (cython -a) next to each .pyx
  MCPFAST_DEBUG=1           -O0 -g, Cython bounds checks on
  MCPFAST_ONLY=a,b          build only the named compiled modules (development)
  MCPFAST_NO_EXTENSIONS=1   none of them: the editable install scripts/test makes (scripts/build
                            then builds them in place, once)
  MCPFAST_PGO=generate|use  profile-guided build: instrumented (writes profiles to build/pgo
                            when the modules run), then built with those profiles
                            (scripts/build --pgo does both around a training run)
  MCPFAST_SANITIZE=1        AddressSanitizer + UndefinedBehaviorSanitizer build, for the fuzz
                            harnesses (scripts/fuzz --sanitize builds it under build/sanitize
                            and runs it with the ASan runtime in LD_PRELOAD)
"""

import hashlib
import importlib.util
import os
import re
import shlex
import subprocess
import sys
import sysconfig

from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
DEBUG = os.environ.get("MCPFAST_DEBUG") == "1"
USE_SYSTEM_SIMDJSON = os.environ.get("MCPFAST_SIMDJSON") == "system"

CXXFLAGS = ["-std=c++17", "-fvisibility=hidden"]
CXXFLAGS += ["-O0", "-g"] if DEBUG else ["-O3", "-DNDEBUG"]
SANITIZE = os.environ.get("MCPFAST_SANITIZE") == "1"
# ASan + UBSan; every UB report aborts so a fuzzer sees it as a crash.
SANITIZE_FLAGS = ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined",
                  "-fno-omit-frame-pointer", "-g", "-O1"] if SANITIZE else []
CXXFLAGS += SANITIZE_FLAGS
# Profile-guided optimisation (scripts/build --pgo): why -- a request's path crosses a dozen
# modules and first-level instruction-cache misses cost it more than its instructions; with
# a profile the compiler keeps the hot paths together and moves the error paths away.
# partial-training: code the training run never reached stays optimised as usual.
PGO = os.environ.get("MCPFAST_PGO", "")
# One profile per interpreter (scripts/build names the same folder).
PGO_DIR = os.path.join(HERE, "build", "pgo", sysconfig.get_config_var("EXT_SUFFIX").strip(".").rsplit(".", 1)[0])
if PGO == "generate":
    PGO_FLAGS = ["-fprofile-generate", f"-fprofile-dir={PGO_DIR}", "-fprofile-update=single"]
elif PGO == "use":
    PGO_FLAGS = ["-fprofile-use", f"-fprofile-dir={PGO_DIR}", "-fprofile-partial-training",
                 "-Wno-missing-profile", "-Wno-error=coverage-mismatch"]
elif PGO == "":
    PGO_FLAGS = []
else:
    raise SystemExit(f"MCPFAST_PGO must be generate or use, not {PGO!r}")
# No -march=native: the wheel must run on any x86-64; simdjson picks its kernel at run time.


def pysimdjson_folder():
    spec = importlib.util.find_spec("simdjson")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("pysimdjson is a build requirement: pip install pysimdjson==7.0.2")
    folder = list(spec.submodule_search_locations)[0]
    for name in ("simdjson.h", "simdjson.cpp"):
        if not os.path.exists(os.path.join(folder, name)):
            raise RuntimeError(f"{name} not found in the pysimdjson package folder {folder}")
    return folder


def simdjson_version(header):
    with open(header, encoding="utf-8", errors="replace") as f:
        m = re.search(r'#define SIMDJSON_VERSION "([^"]+)"', f.read())
    return m.group(1) if m else "unknown"


def pkg_config(*args):
    out = subprocess.run(["pkg-config", *args, "simdjson"], check=True, capture_output=True, text=True)
    return shlex.split(out.stdout)


if USE_SYSTEM_SIMDJSON:
    SIMDJSON_INCLUDE = [a[2:] for a in pkg_config("--cflags-only-I")]
    SIMDJSON_LINK = pkg_config("--libs")
    SIMDJSON_SOURCE = None
else:
    _folder = pysimdjson_folder()
    SIMDJSON_INCLUDE = [_folder]
    SIMDJSON_LINK = []
    SIMDJSON_SOURCE = os.path.join(_folder, "simdjson.cpp")

INCLUDE = [os.path.join(HERE, "include")]
# Every extension is rebuilt when one of the project's C headers changes.
HEADERS = sorted(
    os.path.join("include", "mcpfast", name)
    for name in os.listdir(os.path.join(HERE, "include", "mcpfast"))
    if name.endswith(".h")
)


def picows_version():
    """The picows the WebSocket listener is compiled against (it cimports picows's
    declarations): baked into the module, which refuses to import beside another one."""
    import importlib.metadata

    return importlib.metadata.version("picows")


def ext(name, uses_simdjson=False, macros=()):
    path = name.replace(".", "/") + ".pyx"
    return Extension(
        name,
        [path],
        define_macros=list(macros),
        include_dirs=INCLUDE + (SIMDJSON_INCLUDE if uses_simdjson else []),
        language="c++",
        depends=HEADERS,
        extra_compile_args=CXXFLAGS + PGO_FLAGS,
        extra_link_args=(SIMDJSON_LINK if uses_simdjson else []) + SANITIZE_FLAGS + PGO_FLAGS,
    )


EXTENSIONS = [
    ext("mcpfast._core.framing"),
    ext("mcpfast._core.http_messages"),
    ext("mcpfast._core.http_framing"),
    ext("mcpfast._core.pending"),
    ext("mcpfast._core.messages"),
    ext("mcpfast._core.decode", uses_simdjson=True),
    ext("mcpfast._core.encode"),
    ext("mcpfast._core.calls"),
    ext("mcpfast._core.driven"),
    ext("mcpfast._core.dispatch"),
    ext("mcpfast.jsonrpc.outgoing_core"),
    ext("mcpfast.gateway.forward_core"),
    ext("mcpfast.server.core_fields"),
    ext("mcpfast.server.connection_core"),
    ext("mcpfast.server.context_factories"),
    ext("mcpfast.server.tools_call"),
    ext("mcpfast.server.middleware.routes_core"),
    ext("mcpfast.telemetry.span_core"),
    ext("mcpfast.telemetry.aggregate_core"),
    ext("mcpfast.telemetry.server_core"),
    ext("mcpfast.transports.http.post_reply"),
    ext("mcpfast.transports.http.post_front"),
    ext("mcpfast.transports.http.http_connection"),
    ext("mcpfast.transports.http.response_reader"),
    ext("mcpfast.transports.stream_core"),
    ext("mcpfast.transports.http.client_connection_core"),
    ext("mcpfast.transports.http.client_plain"),
    ext("mcpfast.transports.ws_listener",
        macros=[("MF_PICOWS_BUILT_WITH", '"%s"' % picows_version())]),
]
# MCPFAST_ONLY=framing,pending rebuilds just those modules (a developer convenience).
_only = [m for m in os.environ.get("MCPFAST_ONLY", "").split(",") if m]
if _only:
    EXTENSIONS = [e for e in EXTENSIONS if e.name.rsplit(".", 1)[1] in _only]
if os.environ.get("MCPFAST_NO_EXTENSIONS") == "1":
    EXTENSIONS = []


class BuildExt(build_ext):
    """build_ext that compiles simdjson.cpp once and reuses the object across rebuilds."""

    def build_extensions(self):
        if SIMDJSON_SOURCE is not None:
            obj = self._simdjson_object()
            for e in self.extensions:
                if SIMDJSON_INCLUDE[0] in e.include_dirs and obj not in e.extra_objects:
                    e.extra_objects.append(obj)
        super().build_extensions()

    def _simdjson_object(self):
        header = os.path.join(os.path.dirname(SIMDJSON_SOURCE), "simdjson.h")
        compiler = " ".join(self.compiler.compiler_so)
        key = hashlib.sha256(
            (simdjson_version(header) + compiler + " ".join(CXXFLAGS) + sys.version).encode()
        ).hexdigest()[:16]
        out_dir = os.path.join(HERE, "build", f"simdjson-{simdjson_version(header)}-{key}")
        obj = os.path.join(out_dir, "simdjson.o")
        if not os.path.exists(obj):
            os.makedirs(out_dir, exist_ok=True)
            tmp = obj + f".{os.getpid()}.tmp"
            self.announce(f"compiling {SIMDJSON_SOURCE} (once; cached in {out_dir})", level=2)
            cmd = [*self.compiler.compiler_so, *CXXFLAGS, "-fPIC",
                   "-I", os.path.dirname(SIMDJSON_SOURCE), "-c", SIMDJSON_SOURCE, "-o", tmp]
            cmd = [c for c in cmd if c not in ("-Wstrict-prototypes",)]
            subprocess.run(cmd, check=True)
            os.replace(tmp, obj)  # atomic: concurrent builds never link a half-written object
        return obj


setup(
    ext_modules=cythonize(
        EXTENSIONS,
        language_level=3,
        annotate=os.environ.get("MCPFAST_ANNOTATE") == "1",
        compiler_directives={
            "boundscheck": DEBUG,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": DEBUG,
            "embedsignature": True,
            "freethreading_compatible": False,
        },
    ),
    cmdclass={"build_ext": BuildExt},
)
