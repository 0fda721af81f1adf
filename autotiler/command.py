"""The ``autotiler`` command (also ``python -m autotiler``), the everyday loop around a model:

* ``autotiler generate MODEL.py [-o DIR] [model options]`` runs a model script (the original's
  GenTile); ``autotiler MODEL.py [options]`` is the same;
* ``autotiler build DIR`` compiles a generated directory for the simulated chip (host_harness);
* ``autotiler run DIR --graph G | --kernel K --input NAME=FILE.npy --output NAME=FILE.npy
  [--backend host|gvsoc] [--counters FILE.json]`` builds, runs on .npy arrays (on the simulated
  chip, or on GVSoC's pulp-open cluster) and prints the counters (and writes them as JSON);
* ``autotiler report DIR [--png FILE]`` prints each graph's memory plan from the manifest and
  draws its L2 plan over time;
* ``autotiler import MODEL.tflite|MODEL.onnx -o DIR [--name NAME] [--platform P] [--L1 B] [--L2 B]
  [--L3 B] [--calibration FILE.npz]`` writes a model script of the SQ8 generators, its constants
  and a descriptor for a trained network (:mod:`autotiler.importers.script`).

``build`` and ``run`` add the basic-kernel libraries a generation names in its manifest (the CNN
and SQ8 libraries) to ``--sources``.

It sits above the generator and the host harness, so that a model script (``import autotiler``)
loads neither the harness nor matplotlib; ``report`` alone loads :mod:`autotiler.plot`
(matplotlib, about 0.3 s) and ``import`` alone the importers (the tflite and onnx packages), so
that ``generate``, ``build`` and ``run`` do not pay for them.
Errors end as one line (``autotiler: error: ...``) and a non-zero exit status: 2 for a
malformed command line, 1 for anything that fails (``--verbose`` adds the traceback).
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import signal
import sys
import traceback

import numpy as np

import host_harness
from host_harness import gvsoc
from host_harness.manifest import read_manifests
from host_harness.runner import check_args

from . import __version__
from .cli import positive_int
from .codegen.files import MANIFEST_FORMAT
from .errors import AutoTilerError
from .generators import CNN_KERNELS_DIR, CNN_SOURCES, CNN_SQ8_SOURCES
from .model.session import reset_default_model
from .objectives import OBJECTIVES
from .platforms import PLATFORMS
from .reports import graph_reports

PROG = "autotiler"
# a manifest's "libraries" (autotiler.codegen.files.LIBRARIES) -> their C sources
LIBRARY_SOURCES = {"CNN": CNN_SOURCES, "CNN_SQ8": CNN_SQ8_SOURCES}
COMMANDS = ("generate", "build", "run", "report", "import", "verify")
BACKENDS = ("host", "gvsoc")
GVSOC_PLATFORM = "pulp_open"  # the one platform GVSoC's cluster models (host_harness.gvsoc)
# the platform a generation was tiled for, as its C says it (autotiler.bounds: each kernel's comment)


class UsageError(Exception):
    """A malformed command line: one line, status 2."""


class CommandError(AutoTilerError):
    """A command that cannot do what it is asked (a directory or file missing, nothing to draw)."""


class _CommandParser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(f"{message} (see '{self.prog} --help')")


def _add_model_options(p) -> None:
    p.add_argument("-o", dest="output_dir", metavar="DIR", help="directory for the generated files")
    p.add_argument("-c", dest="const_dir", metavar="DIR", help="directory of relative constant files (graphs)")
    for level in ("L1", "L2", "L3"):
        p.add_argument(f"--{level}", dest=level.lower(), metavar="BYTES", type=positive_int,
                       help=f"{level} budget in bytes")
    p.add_argument("--objective", choices=sorted(OBJECTIVES), metavar="NAME",
                   help="tiling objective: " + ", ".join(sorted(OBJECTIVES)))
    p.add_argument("--platform", choices=sorted(PLATFORMS), metavar="NAME",
                   help="platform: " + ", ".join(sorted(PLATFORMS)))
    p.add_argument("-q", dest="quiet", action="store_true", help="do not print the report")
    p.add_argument("-R", dest="reentrant", action="store_true", help="reentrant (preemptible) graph runner")


def _add_build_options(p) -> None:
    p.add_argument("--sources", nargs="+", default=[], metavar="FILE.c", help="basic-kernel C sources")
    p.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
                   help="include directory (repeatable)")
    p.add_argument("--platform", default="gap8", choices=sorted(PLATFORMS), metavar="NAME",
                   help="simulated platform: " + ", ".join(sorted(PLATFORMS)) + " (default gap8)")
    p.add_argument("--cores", type=positive_int, metavar="N", help="cluster cores (default: the platform's)")
    p.add_argument("--allow-edits", action="store_true",
                   help="build generated files edited by hand (otherwise refused as not of their generation); "
                   "says which files differ from the generation")


def command_parser() -> _CommandParser:
    p = _CommandParser(prog=PROG, description="Tile, generate, build and run GAP AutoTiler models on a simulated "
                       "chip. 'autotiler MODEL.py [options]' is 'autotiler generate MODEL.py [options]'.",
                       epilog="Exit status: 0 done, 1 failed (one line on stderr), 2 bad command line.")
    p.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    p.add_argument("--verbose", action="store_true", help="show the traceback of an error")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_CommandParser)
    g = sub.add_parser("generate", help="run a model script: generate its C code and manifest",
                       description="Run MODEL.py (a model script calling TilerParseOptions and GenerateTilingCode) "
                       "with these options.")
    g.add_argument("model", metavar="MODEL.py", help="the model script")
    _add_model_options(g)
    b = sub.add_parser("build", help="compile a generated directory for the simulated chip",
                       description="Compile DIR's generated C with the basic kernels (host_harness.build); print "
                       "the library and whether the build cache was hit.")
    b.add_argument("dir", metavar="DIR", help="a directory written by 'autotiler generate -o DIR'")
    _add_build_options(b)
    r = sub.add_parser("run", help="build, then run a graph or a user kernel on .npy arrays",
                       description="Build DIR, then run a graph (construct, run, destruct) or a user kernel on "
                       ".npy arrays; write the outputs and print cycles and traffic.")
    r.add_argument("dir", metavar="DIR", help="a generated directory")
    what = r.add_mutually_exclusive_group(required=True)
    what.add_argument("--graph", metavar="NAME", help="the graph to run")
    what.add_argument("--kernel", metavar="NAME", help="the user kernel (or group) to call")
    r.add_argument("--input", action="append", default=[], metavar="ARG=FILE.npy",
                   help="an argument's value: a .npy file (arrays) or a number (scalars); repeatable")
    r.add_argument("--output", action="append", default=[], metavar="ARG=FILE.npy",
                   help="write an argument's value after the run to a .npy file; repeatable")
    r.add_argument("--backend", choices=BACKENDS, default="host",
                   help="host: the simulated chip (default); gvsoc: GVSoC's pulp-open cluster (needs GVSoC and "
                   "a generation for platform pulp_open)")
    r.add_argument("--counters", metavar="FILE.json",
                   help="write the run's counters as JSON: cycles, nodes (name, cycles) of a graph")
    _add_build_options(r)
    r.set_defaults(platform=None)  # the backend's: gap8 on the host, pulp_open on GVSoC
    for action in r._actions:
        if action.dest == "platform":
            action.help = ("simulated platform: " + ", ".join(sorted(PLATFORMS)) + " (default gap8; with "
                           f"--backend gvsoc {GVSOC_PLATFORM}, the only one it takes)")
    rep = sub.add_parser("report", help="print the graphs' memory plans; draw the L2 plan (PNG)",
                         description="Print each graph's memory plan (symbols, areas, offsets, live nodes, budgets, "
                         "prefetches) from DIR's manifest, and draw its L2 plan over time as a PNG. For an import "
                         "directory (autotiler import -o DIR): the import report (per layer MACs, cycles, MAC/cycle, "
                         "L1, traffic; latency; L2 against its lower bound and TFLM's arena).")
    rep.add_argument("dir", metavar="DIR", help="a generated directory, or an import directory")
    rep.add_argument("--png", metavar="FILE", help="the picture (default DIR/<graph>_l2_plan.png; with several "
                     "graphs, FILE's name gets _<graph>)")
    imp = sub.add_parser("import", help="write the model script of a trained TFLite or ONNX network",
                         description="Read MODEL.tflite or MODEL.onnx (int8, or float with --calibration), lower it "
                         "onto the SQ8 generators (TensorFlow Lite Micro's arithmetic) and write into DIR: NAME.py (a "
                         "model script: 'autotiler generate DIR/NAME.py -o GEN'), its constants (NAME_tensors/) and "
                         "NAME.json (graph, inputs, outputs). Atomic: on any error DIR is left as it was.")
    imp.add_argument("model", metavar="MODEL", help="the model file: MODEL.tflite or MODEL.onnx")
    imp.add_argument("-o", dest="output_dir", metavar="DIR", required=True, help="directory to write into")
    imp.add_argument("--name", metavar="NAME", help="graph and file name (default: the model file's stem as a C "
                     "identifier)")
    imp.add_argument("--platform", default="gap8", choices=sorted(PLATFORMS), metavar="NAME",
                     help="platform: " + ", ".join(sorted(PLATFORMS)) + " (default gap8)")
    for level in ("L1", "L2", "L3"):
        imp.add_argument(f"--{level}", dest=level.lower(), metavar="B", type=positive_int,
                         help=f"{level} budget in bytes (default: the platform's)")
    imp.add_argument("--calibration", metavar="FILE.npz", help="calibration inputs of a float model: arrays of the "
                     "input's shape with N samples, by input name")
    imp.add_argument("--fusion", default="fit", choices=("fit", "min", "none"),
                     help="fused layers (one user kernel, intermediates in L1): fit (default) fuses until the peak L2 "
                     "of the activations fits the L2 budget (or --fusion-l2), then where the predicted cycles drop; "
                     "min lowers that peak as far as fusion can first; none fuses nothing")
    imp.add_argument("--fusion-l2", type=positive_int, metavar="B",
                     help="the peak L2 of the activations that fusion must reach (default: the L2 budget)")
    imp.add_argument("--fuse", action="append", default=[], metavar="LAYER",
                     help="force LAYER to fuse with the next layer (repeatable)")
    imp.add_argument("--no-fuse", action="append", default=[], metavar="LAYER",
                     help="never fuse LAYER with the next layer (repeatable)")
    ver = sub.add_parser("verify", help="compare an import's generated C with the source model's own reference",
                         description="Generate and build DIR's model script, run it on the simulated chip and the "
                         "source model on its reference (tflite-micro for TFLite, onnxruntime for ONNX) on the same "
                         "inputs; print per output the items equal and the largest difference in LSBs. Status 0 when "
                         "the outputs meet the source's criterion, 1 when not.")
    ver.add_argument("dir", metavar="DIR", help="an import directory (autotiler import MODEL -o DIR)")
    ver.add_argument("--inputs", type=positive_int, default=1, metavar="N", help="random int8 inputs to try "
                     "(default 1)")
    ver.add_argument("--input", action="append", default=[], metavar="NAME=x.npy",
                     help="a graph input from a file (its shape and dtype, or N of them stacked)")
    return p


def full_help() -> str:
    """The help of the command and of every subcommand."""
    p = command_parser()
    sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    parts = [p.format_help()]
    parts += [f"\n--- {PROG} {name} ---\n" + sub.choices[name].format_help() for name in COMMANDS]
    return "".join(parts)


def main(argv=None) -> int:
    """The ``autotiler`` command; returns the exit status."""
    try:
        status = _command(argv)
        sys.stdout.flush()  # a reader that closed the pipe shows here, not at the interpreter's exit
        return status
    except BrokenPipeError:
        return _reader_gone()


def _command(argv) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    verbose = "--verbose" in argv
    argv = [a for a in argv if a != "--verbose"]
    try:
        if not argv:
            print(full_help(), file=sys.stderr)
            return 2
        if argv[0] in ("-h", "--help"):
            print(full_help())
            return 0
        if argv[0] not in COMMANDS and not argv[0].startswith("-"):
            argv = ["generate"] + argv  # the original form: autotiler MODEL.py [options]
        ns = command_parser().parse_args(argv)
        return {"generate": _generate, "build": _build, "run": _run, "report": _report,
                "import": _import, "verify": _verify}[ns.command](ns)
    except BrokenPipeError:
        raise
    except SystemExit as ex:  # --help, --version (argparse), or a model script's sys.exit
        return ex.code if isinstance(ex.code, int) else (0 if ex.code is None else 1)
    except UsageError as err:
        _fail(str(err), verbose)
        return 2
    except AutoTilerError as err:
        _fail(str(err), verbose)
        return 1
    except OSError as err:
        _fail(f"{err.strerror or err}" + (f": '{err.filename}'" if err.filename else ""), verbose)
        return 1
    except KeyboardInterrupt:
        _fail("interrupted", verbose)
        return 130
    except Exception as err:  # a bug: still one line, the traceback on request
        _fail(f"internal error: {type(err).__name__}: {err}" + ("" if verbose else " (--verbose shows the "
                                                                               "traceback)"), verbose)
        return 1


def _reader_gone() -> int:
    """The reader of stdout closed it (``autotiler --help | head``): end quietly, as Unix tools do
    on SIGPIPE, with their status (128 + 13). stdout goes to /dev/null so that the interpreter's
    last flush does not complain."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 128 + int(signal.SIGPIPE)


def _fail(message: str, verbose: bool) -> None:
    if verbose:
        traceback.print_exc()
    print(f"{PROG}: error: {message}", file=sys.stderr)


def _model_args(ns) -> list:
    args = []
    for flag, key in (("-o", "output_dir"), ("-c", "const_dir"), ("--L1", "l1"), ("--L2", "l2"), ("--L3", "l3"),
                      ("--objective", "objective"), ("--platform", "platform")):
        value = getattr(ns, key)
        if value is not None:
            args += [flag, str(value)]
    return args + (["-q"] if ns.quiet else []) + (["-R"] if ns.reentrant else [])


def _generate(ns) -> int:
    if not os.path.isfile(ns.model):
        raise CommandError(f"model script '{ns.model}' not found")
    reset_default_model()
    saved = sys.argv
    sys.argv = [ns.model] + _model_args(ns)
    try:
        runpy.run_path(ns.model, run_name="__main__")
    finally:
        sys.argv = saved
    return 0


def _directory(path: str) -> str:
    if not os.path.isdir(path):
        raise CommandError(f"directory '{path}' not found",
                           hint=f"generate into it first: {PROG} generate MODEL.py -o {path}")
    return path


def _json_dicts(directory: str):
    """The JSON objects of ``directory``'s ``*.json`` files, by name (unreadable or other files skipped):
    generated manifests, import descriptors."""
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".json"):
            continue
        try:
            with open(os.path.join(directory, name), encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            yield data


def library_sources(gen_dir: str) -> tuple:
    """(sources, include dirs) of the basic-kernel libraries the manifests in ``gen_dir`` name."""
    sources = []
    for data in _json_dicts(gen_dir):
        if data.get("format") == MANIFEST_FORMAT:
            for lib in data.get("libraries") or ():
                sources += [str(s) for s in LIBRARY_SOURCES.get(lib, ()) if str(s) not in sources]
    return sources, ([str(CNN_KERNELS_DIR)] if sources else [])


def _built(ns):
    gen_dir = _directory(ns.dir)
    lib_sources, lib_dirs = library_sources(gen_dir)
    given = {os.path.abspath(s) for s in ns.sources}
    sources = list(ns.sources) + [s for s in lib_sources if os.path.abspath(s) not in given]
    dirs = list(ns.include_dirs) + [d for d in lib_dirs if d not in ns.include_dirs]
    return host_harness.build(gen_dir, sources=sources, include_dirs=dirs, platform=ns.platform, cores=ns.cores,
                              allow_edits=ns.allow_edits, backend=getattr(ns, "backend", "host"))


def _build(ns) -> int:
    prog = _built(ns)
    print(f"library {prog.library} ({'cache hit' if prog.cache_hit else 'built'})")
    print(f"kernels: {', '.join(prog.kernels) or '(none)'}")
    if prog.graphs:
        print(f"graphs: {', '.join(prog.graphs)}")
    return 0


def _pairs(items: list, option: str) -> dict:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise UsageError(f"argument {option}: '{item}' is not NAME=FILE")
        if not name.isidentifier():
            raise UsageError(f"argument {option}: '{name}' is not an argument name")
        if name in out:
            raise UsageError(f"argument {option}: '{name}' given twice")
        out[name] = value
    return out


def _load(spec, arg, value: str):

    if not arg.pointer and not value.endswith(".npy"):
        try:
            return float(value) if arg.is_float else int(value, 0)
        except ValueError:
            raise CommandError(f"'{value}' is not a number", kernel=spec.name, arg=arg.name) from None
    if not os.path.isfile(value):
        raise CommandError(f"input file '{value}' not found", kernel=spec.name, arg=arg.name)
    try:
        data = np.load(value, allow_pickle=False)
    except ValueError as err:
        raise CommandError(f"'{value}' is not a .npy array: {err}", kernel=spec.name, arg=arg.name) from None
    return data if arg.pointer else data.item()


def _values(spec, inputs: dict, outputs: dict) -> dict:
    """The arguments of a run: each input loaded, each output allocated (zeros) unless given."""

    names = spec.arg_names
    for option, given in (("--input", inputs), ("--output", outputs)):
        for name in given:
            if name not in names:
                raise CommandError(f"{option} {name}: '{spec.name}' has no argument '{name}'",
                                   hint=f"its arguments are {', '.join(names)}")
    values = {}
    for arg in spec.args:
        if arg.name in inputs:
            values[arg.name] = _load(spec, arg, inputs[arg.name])
        elif arg.pointer and arg.direction == "out" and arg.dtype and (arg.shape or arg.items):
            values[arg.name] = np.zeros(tuple(arg.shape) if arg.shape else (arg.items,), dtype=arg.dtype)
        else:
            kind = "array" if arg.pointer else "number"
            raise CommandError(f"no --input for argument '{arg.name}'", kernel=spec.name,
                               hint=f"give --input {arg.name}=" + ("FILE.npy" if arg.pointer else "VALUE")
                               + f" ({kind}" + (f", dtype {arg.dtype}" if arg.dtype else "")
                               + (f", shape {tuple(arg.shape)}" if arg.shape else "") + ")")
    for name in outputs:
        if not isinstance(values[name], np.ndarray):
            raise CommandError(f"--output {name}: a scalar argument is not written back", kernel=spec.name)
    return values


def _spec(gen_dir: str, ns):

    manifests = read_manifests(gen_dir, allow_edits=ns.allow_edits)
    if ns.graph:
        table = {g.name: g for m in manifests for g in m.graphs}
        what, name = "graph", ns.graph
    else:
        table = {k.name: k for m in manifests for k in m.kernels}
        what, name = "kernel", ns.kernel
    if name not in table:
        raise CommandError(f"unknown {what} '{name}' in {gen_dir}",
                           hint=f"{what}s are {', '.join(table) or '(none)'}")
    return table[name]


def _run(ns) -> int:
    inputs, outputs = _pairs(ns.input, "--input"), _pairs(ns.output, "--output")
    gen_dir = _directory(ns.dir)
    spec = _spec(gen_dir, ns)
    values = _values(spec, inputs, outputs)
    check_args(spec, values)  # dtype, shape, scalar range: before compiling anything
    if ns.counters:
        _check_writable(ns.counters)
    if ns.backend == "gvsoc":
        _check_gvsoc(gen_dir, ns)
    prog = _built(ns)
    counters = _run_graph(prog, ns.graph, values) if ns.graph else prog.call(ns.kernel, **values)
    print(format_counters(spec.name, counters))
    for name, path in outputs.items():
        np.save(path, values[name])
        print(f"wrote {name} to {path} ({values[name].dtype}, shape {values[name].shape})")
    if ns.counters:
        _write_counters(ns.counters, spec.name, ns.backend, counters)
    return 0


def _run_graph(prog, name: str, values: dict) -> dict:
    """Construct, run, destruct; print the constructor's figures; the run's counters."""
    graph = prog.graph(name)
    graph.construct()
    try:
        built = dict(graph.counters or {})
        counters = graph.run(**values)
    finally:
        if graph.constructed:
            graph.destruct()
    if "construct" in counters:   # GVSoC: one application constructs, runs and destructs
        built = {"cycles": counters["construct"]["cycles"]}
    flash = f", {built['flash_to_l2']} B flash->L2 (promoted constants)" if "flash_to_l2" in built else ""
    print(f"{name}_Construct: {built['cycles']} cycles{flash}")
    return counters


def _check_gvsoc(gen_dir: str, ns) -> None:
    """GVSoC installed, and the generation (and --platform) for the platform it models; before any build."""
    if not gvsoc.available():
        raise CommandError("--backend gvsoc needs GVSoC, and GVSOC_HOME is not set (or has no env.sh)",
                           hint=gvsoc.INSTALL_HINT)
    if ns.platform not in (None, GVSOC_PLATFORM):
        raise CommandError(f"--platform {ns.platform}: GVSoC models platform {GVSOC_PLATFORM} only",
                           hint=f"leave --platform out with --backend gvsoc (it is {GVSOC_PLATFORM})")
    other = sorted(generation_platforms(gen_dir) - {GVSOC_PLATFORM})
    if other:
        raise CommandError(f"{gen_dir} was generated for platform {', '.join(other)}, which GVSoC does not model "
                           f"(it runs pulp-open's cluster)",
                           hint=f"regenerate it for {GVSOC_PLATFORM}: an import with 'autotiler import MODEL -o "
                           f"DIR --platform {GVSOC_PLATFORM}' then 'autotiler generate DIR/NAME.py -o GEN', a model "
                           f"script with 'autotiler generate MODEL.py -o GEN --platform {GVSOC_PLATFORM}' (its L1 "
                           f"budget within {GVSOC_PLATFORM}'s); or run it with --backend host")


def generation_platforms(gen_dir: str) -> set:
    """The platforms ``gen_dir``'s manifests were generated for (their ``platform`` field)."""
    return {data["platform"] for data in _json_dicts(gen_dir)
            if data.get("format") == MANIFEST_FORMAT and isinstance(data.get("platform"), str)}


def _check_writable(path: str) -> None:
    """``--counters``: a file that can be written, checked before the run (which may take minutes)."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        problem = "is a directory"
    elif not os.path.isdir(folder):
        problem = f"is in a directory that does not exist ({folder})"
    elif not os.access(path if os.path.exists(path) else folder, os.W_OK):
        problem = "is not writable" if os.path.exists(path) else f"cannot be created (no write permission on {folder})"
    else:
        return
    raise CommandError(f"--counters {path}: the file {problem}", hint="give a writable FILE.json")


def _write_counters(path: str, name: str, backend: str, counters: dict) -> None:
    data = {"name": name, "backend": backend, **counters}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, default=_json_number)
        f.write("\n")
    print(f"wrote counters to {path}")


def _json_number(value):
    """numpy scalars (the host simulator's counters) as JSON numbers."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON")


TRAFFIC = (("l2_to_l1", "L2->L1"), ("l1_to_l2", "L1->L2"), ("flash_to_l2", "flash->L2"), ("l3_to_l2", "L3->L2"),
           ("l2_to_l3", "L2->L3"))


def _traffic(c: dict) -> str:
    return ", ".join(f"{label} {c[key]} B" for key, label in TRAFFIC if key in c and (c[key] or key == "l2_to_l1"))


def format_counters(name: str, c: dict) -> str:
    """Cycles and traffic of a run; per node when the counters have them (``nodes``: a list of
    dicts with ``name``, ``cycles`` and the traffic keys), else the totals."""
    lines = []
    nodes = c.get("nodes")
    if isinstance(nodes, (list, tuple)) and nodes:
        for i, n in enumerate(nodes):
            traffic = _traffic(n)
            lines.append(f"  node {i} {n.get('name', '?')}: {n.get('cycles', '?')} cycles" + (f"; {traffic}" * bool(traffic)))
    if c.get("backend") == "gvsoc":
        return "\n".join([f"{name}: {c['cycles']} cycles on GVSoC (pulp-open cluster)"] + lines)
    lines.insert(0, f"{name}: {c['cycles']} cycles (compute {c.get('compute_cycles', 0)}, stall "
                 f"{c.get('stall_cycles', 0)}, fork {c.get('fork_cycles', 0)}); {_traffic(c)}; peak L1 "
                 f"{c.get('peak_l1', 0)} B, L2 {c.get('peak_l2', 0)} B")
    return "\n".join(lines)


def read_plans(gen_dir: str) -> list:
    """(manifest path, manifest data) of every autotiler manifest in ``gen_dir``."""

    found = []
    for name in sorted(os.listdir(gen_dir)):
        if not name.endswith(".json"):
            continue
        path = os.path.join(gen_dir, name)
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("format") == MANIFEST_FORMAT:
            found.append((path, data))
    if not found:
        raise CommandError(f"no '{MANIFEST_FORMAT}' manifest (*.json) in {gen_dir}",
                           hint=f"generate into it first: {PROG} generate MODEL.py -o {gen_dir}")
    return found


def _report(ns) -> int:
    # matplotlib only here: not a cycle, the other subcommands would pay ~0.3 s for nothing
    from .plot import plot_plan

    gen_dir = _directory(ns.dir)
    if is_import_dir(gen_dir):
        # the importers only for an import directory (the tflite package, tflite-micro's arena)
        from .importers.report import report_of_import

        if ns.png:
            raise CommandError(f"{gen_dir} is an import directory: no L2 plan to draw",
                               hint=f"generate it ({PROG} generate DIR/NAME.py -o GEN) and report GEN with --png")
        print(report_of_import(gen_dir))
        return 0
    graphs = []
    for path, data in read_plans(gen_dir):
        reports = graph_reports(data)
        kernels = data.get("kernels") or []
        print(f"{path}: {sum(k.get('kind') == 'user_kernel' for k in kernels)} user kernel(s), "
              f"{sum(k.get('kind') == 'group' for k in kernels)} group(s), {len(reports)} graph(s)")
        for name, t in sorted((data.get("tilings") or {}).items()):
            print(f"  {name}: {t['ntiles']} tile(s), L1 {t['l1_bytes']} B of {t['budget']} B, traffic "
                  f"{t['traffic_in'] + t['traffic_out']} B ({t['objective']})")
        for g in reports:
            print(g.format("  "))
        graphs += reports
    if not graphs:
        if ns.png:
            raise CommandError(f"no graph in {gen_dir}: no L2 plan to draw", hint="drop --png")
        return 0
    for g in graphs:
        if ns.png is None:
            path = os.path.join(gen_dir, f"{g.name}_l2_plan.png")
        elif len(graphs) > 1:
            stem, ext = os.path.splitext(ns.png)
            path = f"{stem}_{g.name}{ext or '.png'}"
        else:
            path = ns.png
        print(f"wrote {plot_plan(g, path)}")
    return 0


def _import(ns) -> int:
    # the importers only here: the tflite and onnx packages are not for the other subcommands
    from .importers.report import import_report
    from .importers.script import import_model

    r = import_model(ns.model, ns.output_dir, name=ns.name, platform=ns.platform, l1=ns.l1, l2=ns.l2, l3=ns.l3,
                     calibration=ns.calibration, fusion=ns.fusion, fuse=tuple(ns.fuse), no_fuse=tuple(ns.no_fuse),
                     fusion_l2=ns.fusion_l2)
    for line in r.report:
        print(line)
    lw = r.lowered
    print(f"imported {ns.model}: {len(lw.layers)} layer(s), {lw.macs} MACs, {len(lw.consts)} constant(s) "
          f"({sum(c.data.nbytes for c in lw.consts)} B); {r.budgets.platform} budgets L1 {r.budgets.l1} B, "
          f"L2 {r.budgets.l2} B, L3 {r.budgets.l3} B")
    if r.model is not None:
        print(import_report(r.model, None, r.graph, r.descriptor, lowered=lw))
    else:
        for layer in lw.layers:
            print(f"  {layer.name}: {layer.generator} ({layer.source}), {layer.macs} MACs")
    for kind, ports in (("input", lw.inputs), ("output", lw.outputs)):
        for p in ports:
            src = f" (the source takes {p.source['dtype']}{p.source['shape']})" if p.source else ""
            print(f"  {kind} {p.name}: {p.dtype}{list(p.shape)}, scale {p.scale:.9g}, zero point {p.zero_point}{src}")
    d = ns.output_dir
    print(f"wrote {os.path.join(d, r.name + '.py')}, {os.path.join(d, r.name + '.json')}, "
          f"{os.path.join(d, r.name + '_tensors')}{os.sep}")
    print(f"next: {PROG} generate {os.path.join(d, r.name + '.py')} -o GEN")
    return 0


def is_import_dir(path: str) -> bool:
    """A directory written by ``autotiler import`` (a ``NAME.json`` descriptor naming its model script)
    with no generated manifest."""
    found = False
    for data in _json_dicts(path):
        if data.get("format") == MANIFEST_FORMAT:
            return False
        found = found or ("model_script" in data and "graph" in data)
    return found


def _verify(ns) -> int:
    # tflite-micro and onnxruntime only here
    from .importers.verify import run_command

    return run_command(ns)
