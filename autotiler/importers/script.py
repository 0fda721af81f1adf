"""The model script writer and the import itself (issue 24 §1): a trained model file in, a
directory out holding

* ``NAME.py``: a model script of the guide's API over the SQ8 generators (budgets at the top,
  ``CreateGraph`` with one ``TCArgInfo``/``ConstInfo`` per constant, the locals, one generator call
  and one ``AddNode`` per layer), runnable as ``autotiler generate DIR/NAME.py -o GEN`` from any
  working directory (it finds its constants next to itself);
* ``NAME_tensors/``: the constants, one raw little-endian file per symbol;
* ``NAME.json``: the descriptor ``{"graph", "model_script", "source", "inputs", "outputs"}``, each
  input and output ``{"name", "shape", "dtype", "scale", "zero_point"}`` (plus ``"source"``: what
  the source model takes there, when its interface is float).

The import is atomic: everything is written into a staging directory next to DIR and checked
(the script is run: every layer tiled, the graph planned), then moved in; on any error nothing
is left and DIR is as it was; the user's other files in DIR survive.
"""

from __future__ import annotations

import contextlib
import json
import os
import runpy
import shutil
import sys
import tempfile
import textwrap
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Mapping, Optional

import numpy as np

from .. import __version__
from ..errors import AutoTilerError, ImportModelError
from ..model.session import current_model, reset_default_model
from ..platforms import PLATFORMS
from . import fuse as F
from . import lower as L
from . import onnx_reader, quantize, tflite_reader
from .ir import DType, Graph, OpKind

KiB = 1024
FORMATS = {".tflite": "tflite", ".onnx": "onnx"}
GRAPH_ARG = "signed char * __restrict__"


@dataclass(frozen=True)
class Budgets:
    """The script's memory budgets (bytes) and platform."""

    platform: str
    l1: int
    l2: int
    l3: int
    flash: int


def default_budgets(platform: str, lowered: L.Lowered, l1=None, l2=None, l3=None) -> Budgets:
    """The platform's L1, its L2 less the graph's inputs and outputs (the application's buffers)
    and the room of the application's code (``l2_app_bytes``) in 4 KiB steps, its L3 RAM and
    flash; each overridden where given."""
    p = PLATFORMS[platform]
    io = sum(int(np.prod(port.shape)) for port in lowered.inputs + lowered.outputs)
    free = p.l2_size - p.l2_app_bytes - io
    return Budgets(platform, l1 or p.l1_size, l2 or max(free // (4 * KiB) * (4 * KiB), 4 * KiB),
                   l3 or p.l3_ram_size, p.l3_flash_size)


# ---------------------------------------------------------------------------------------------
# The script


def _value(v) -> str:
    if isinstance(v, L.Sym):
        return str(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return repr(v)


def _call(fn: str, args: list, indent: str, width: int = 112) -> str:
    """``fn(args...)`` wrapped under the open parenthesis at ``width``."""
    head = f"{indent}{fn}("
    lines, line = [], head
    for i, a in enumerate(args):
        piece = a + (", " if i < len(args) - 1 else ")")
        if len(line) + len(piece.rstrip()) > width and line.strip() != head.strip():
            lines.append(line.rstrip())
            line = " " * len(head) + piece
        else:
            line += piece
    if not args:
        line += ")"
    return "\n".join(lines + [line])


def _dims(layer: L.Layer, ports: dict) -> list:
    """AddKernelArgDim of each argument bound to a graph input or output: the interface's shape,
    so that the manifest (and ``autotiler run``) take and give the source model's shapes."""
    out = []
    for _, symbol, arg in layer.bindings:
        port = ports.get(symbol)
        if port is not None:
            dims = [repr(d) for d in port.shape] + ["1"]
            out.append(_call("AddKernelArgDim", [repr(layer.name), repr(arg), str(len(dims))] + dims, "    "))
    return out


def _doc_safe(text: str) -> str:
    """``text`` inside the script's docstring: no backslash escapes, no closing quotes."""
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


def render(name: str, lowered: L.Lowered, budgets: Budgets, source: str, note: str = "") -> str:
    """The text of the model script ``NAME.py``."""
    ports = {p.name: p for p in lowered.inputs + lowered.outputs}
    kinds = sorted({layer.generator for layer in lowered.layers})
    io = ", ".join(f"{p.name} {p.dtype}{list(p.shape)}" for p in lowered.inputs)
    oo = ", ".join(f"{p.name} {p.dtype}{list(p.shape)}" for p in lowered.outputs)
    out = [
        f'"""{name}: imported from {_doc_safe(Path(source).name)} by `autotiler import` (autotiler {__version__}).',
        "",
        *textwrap.wrap(f"{len(lowered.layers)} layer(s), {lowered.macs} MACs, with TensorFlow Lite Micro's int8 "
                       "arithmetic (the SQ8 generators with Scale_DataSize 4, or the Ctrl field SCALE_DATASIZE 4; "
                       "docs/cnn-sq8.md §5), feature maps in HWC (TFLite's NHWC, one image). Generators: "
                       + ", ".join(kinds) + f". Inputs: {io}. Outputs: {oo}. {note}", 100),
        "",
        "Edit the budgets below, the platform, or a layer; then:",
        f"    autotiler generate {name}.py -o GEN",
        f"    autotiler run GEN --graph {name} "
        + " ".join(f"--input {p.name}=x.npy" for p in lowered.inputs) + " "
        + " ".join(f"--output {p.name}=y.npy" for p in lowered.outputs),
        '"""',
        "",
        "import sys",
        "from pathlib import Path",
        "",
        "from autotiler import *  # noqa: F401,F403  (the model API, same names as the C library)",
        "",
        "HERE = Path(__file__).resolve().parent",
        f"NAME = {name!r}",
        f"CONST_DIR = HERE / {name + '_tensors'!r}       # the constants, one raw little-endian file each",
        f"PLATFORM = {budgets.platform!r}",
        f"L1_BUDGET = {budgets.l1}",
        f"L2_BUDGET = {budgets.l2}",
        f"L3_BUDGET = {budgets.l3}",
        f"FLASH_BUDGET = {budgets.flash}",
        "",
        "",
        "def ConfigureTiler():",
        "    SetInlineMode(ALWAYS_INLINE)",
        "    SetSymbolDynamics()",
        "    SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)",
        f"    SetGeneratedFilesNames({name + 'Kernels.c'!r}, {name + 'Kernels.h'!r})",
        "    SetMemoryDeviceInfos(4,",
        f"        AT_MEM_L1, L1_BUDGET, {name + '_L1_Memory'!r}, 0, 0,",
        f"        AT_MEM_L2, L2_BUDGET, {name + '_L2_Memory'!r}, 0, 0,",
        f"        AT_MEM_L3_HRAM, L3_BUDGET, {name + '_L3_Memory'!r}, 0, 0,",
        f"        AT_MEM_L3_HFLASH, FLASH_BUDGET, \"0\", {name + '_L3_Flash_Const.dat'!r}, 0)",
        "    SetConstDir(str(CONST_DIR))",
        "",
        "",
        "def tflm_ctrl():",
        '    """The Ctrl of the generators without a Scale_DataSize argument: TFLM\'s requantisation."""',
        "    ctrl = CNN_GenControl_T()",
        "    CNN_InitGenCtrl(ctrl)",
        '    CNN_SetGenCtrl(ctrl, "SCALE_DATASIZE", AT_OPT_VAL(4))',
        "    return ctrl",
        "",
        "",
        "def Layers():",
        '    """One user kernel per layer, by the SQ8 generators."""',
        f"    {L.CTRL} = tflm_ctrl()",
    ]
    consts = {c.symbol for c in lowered.consts}
    for layer in lowered.layers:
        ins = ", ".join(s for d, s, _ in layer.bindings if d == "in" and s not in consts)
        outs = ", ".join(s for d, s, _ in layer.bindings if d == "out")
        out.append(" ".join(f"    # {layer.source}: {ins} -> {outs}".split()).join(("    ", "")))
        out.append(_call(layer.generator, [repr(layer.name)] + [_value(a) for a in layer.args], "    "))
        out += _dims(layer, ports)
    out += [
        "",
        "",
        "def const(ctype, symbol):",
        '    """A constant of the graph, homed in flash, read from CONST_DIR/<symbol>.bin."""',
        "    bits = 32 if ctype == \"int\" else 8",
        "    return TCArgInfo(f\"{ctype} * __restrict__\", symbol, ARG_SCOPE_GLOBAL, ARG_DIR_CONSTIN,",
        "                     AT_MEM_L3_HFLASH, AT_MEM_UNDEF, ConstInfo(f\"{symbol}.bin\", 1, 1, bits, 0))",
        "",
        "",
        "def local(symbol):",
        f"    return TCArgInfo({GRAPH_ARG!r}, symbol, ARG_SCOPE_LOCAL, ARG_DIR_INOUT, AT_MEM_UNDEF,",
        "                     AT_MEM_UNDEF, 0)",
        "",
        "",
        "def Graph(Name=NAME):",
        "    CreateGraph(Name,",
        f"        CArgs({len(lowered.inputs) + len(lowered.consts) + len(lowered.outputs)},",
    ]
    pad = " " * 22
    args = [f"TCArgInfo({GRAPH_ARG!r}, {p.name!r}, ARG_SCOPE_ARG, ARG_DIR_IN,\n{pad}AT_MEM_L2, AT_MEM_UNDEF, 0)"
            for p in lowered.inputs]
    args += [f"const({c.ctype!r}, {c.symbol!r})" for c in lowered.consts]
    args += [f"TCArgInfo({GRAPH_ARG!r}, {p.name!r}, ARG_SCOPE_ARG, ARG_DIR_OUT,\n{pad}AT_MEM_UNDEF, AT_MEM_L2, 0)"
             for p in lowered.outputs]
    out += [f"            {a}," for a in args[:-1]] + [f"            {args[-1]}", "        ),"]
    locs = [f"local({s!r})" for s, _ in lowered.locals]
    out.append(_call("CArgs", [str(len(locs))] + locs, "        ") + "")
    out.append("    )")
    for layer in lowered.layers:
        binds = [f"GNodeArg({'GNA_OUT' if d == 'out' else 'GNA_IN'}, {s!r}, 0)" for d, s, _ in layer.bindings]
        out.append(_call("AddNode", [repr(layer.name), _call("Bindings", [str(len(binds))] + binds, "").strip()],
                         "    ", width=100000) if len(binds) < 3 else
                   f"    AddNode({layer.name!r}, Bindings({len(binds)},\n" +
                   ",\n".join(f"        {b}" for b in binds) + "))")
    out += [
        "    CloseGraph()",
        "",
        "",
        "def declare():",
        '    """The whole model: configuration, SQ8 library, layers, graph."""',
        "    ConfigureTiler()",
        "    LoadCNN_SQ8_Library()",
        "    Layers()",
        "    Graph()",
        "",
        "",
        "def main(argv=None):",
        "    argv = sys.argv if argv is None else argv",
        "    if TilerParseOptions([argv[0], \"--platform\", PLATFORM] + list(argv[1:])):",
        "        print(\"Failed to initialize or incorrect arguments.\", file=sys.stderr)",
        "        return 1",
        "    declare()",
        "    GenerateTilingCode()",
        "    return 0",
        "",
        "",
        'if __name__ == "__main__":',
        "    sys.exit(main(sys.argv))",
        "",
    ]
    return "\n".join(out)


def descriptor(name: str, graph: Graph, lowered: L.Lowered, platform: str, quantized: bool) -> dict:
    """``NAME.json`` (issue 24 §1)."""
    return {"graph": name, "model_script": f"{name}.py", "source": os.path.abspath(graph.source),
            "format": graph.source_format, "layout": graph.source_layout, "quantized_by_import": quantized,
            "platform": platform, "inputs": [p.to_json() for p in lowered.inputs],
            "outputs": [p.to_json() for p in lowered.outputs]}


def tensor_files(name: str, lowered: L.Lowered) -> dict:
    """{relative path: bytes} of the constants."""
    out = {}
    for c in lowered.consts:
        dtype = np.dtype("<i4") if c.ctype == "int" else np.dtype("i1")
        out[f"{name}_tensors/{c.symbol}.bin"] = np.ascontiguousarray(c.data, dtype=dtype).tobytes()
    return out


# ---------------------------------------------------------------------------------------------
# Reading the model file


def detect_format(path: str, data: bytes) -> str:
    """"tflite" or "onnx" from the content, refusing an empty file, an unknown extension and a
    content that does not match its extension."""
    ext = os.path.splitext(path)[1].lower()
    if ext not in FORMATS:
        raise ImportModelError(f"unknown model extension {ext or '(none)'!r}: autotiler import takes a .tflite or "
                               "an .onnx file", where=path, hint="name the file MODEL.tflite or MODEL.onnx")
    if not data:
        raise ImportModelError("the model file is empty", where=path)
    if len(data) >= 8 and data[4:8] == b"TFL3":
        found = "tflite"
    elif data[:1] == b"\x08":  # an ONNX ModelProto starts with field 1 (ir_version), a varint
        found = "onnx"
    else:
        raise ImportModelError(f"not a {ext[1:].upper() if ext != '.tflite' else 'TFLite'} model (neither a TFLite "
                               "flatbuffer, identifier 'TFL3', nor an ONNX protobuf)", where=path,
                               hint="give a model exported by TensorFlow Lite's converter or by ONNX")
    if found != FORMATS[ext]:
        raise ImportModelError(f"the file is a {'TFLite' if found == 'tflite' else 'ONNX'} model named {ext}",
                               where=path, hint=f"rename it .{found}")
    return found


def read_model(path: str) -> Graph:
    """The IR graph of a .tflite or .onnx file (the front ends, imported here: the onnx package is
    an extra)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise ImportModelError("model file not found", where=path) from None
    except IsADirectoryError:
        raise ImportModelError("is a directory, not a model file", where=path) from None
    except OSError as err:
        raise ImportModelError(f"cannot read the model file: {err.strerror or err}", where=path) from None
    fmt = detect_format(path, data)
    reader = tflite_reader.read_tflite if fmt == "tflite" else onnx_reader.read_onnx
    return reader(path, data)


def load_calibration(path: str, graph: Graph) -> dict:
    """{graph input: array [N, ...]} from an .npz (by input name, or arr_0... in input order, or the
    only array of a one-input model)."""
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except FileNotFoundError:
        raise ImportModelError("calibration file not found", where=path) from None
    except (OSError, ValueError) as err:
        raise ImportModelError(f"not an .npz of arrays: {err}", where=path,
                               hint="write it with numpy.savez(FILE, input_name=array)") from None
    out = {}
    for i, name in enumerate(graph.inputs):
        arr = arrays.get(name, arrays.get(f"arr_{i}", arrays.get(L.c_identifier(name))))
        if arr is None and len(graph.inputs) == 1 and len(arrays) == 1:
            arr = next(iter(arrays.values()))
        if arr is None:
            raise ImportModelError(f"no calibration array for input {name!r} (arrays: {', '.join(arrays) or 'none'})",
                                   where=path, arg=name, hint=f"numpy.savez(FILE, **{{{name!r}: array}})")
        out[name] = arr  # its shape is checked by quantize_graph (NHWC, or an ONNX model's NCHW)
    return out


# ---------------------------------------------------------------------------------------------
# Atomic write


def _check_generation(stage: Path, name: str, final: str):
    """Run the staged script (as ``autotiler generate``) into a scratch directory: every layer
    tiles and the graph fits its budgets, else the generator's error, naming the layer and the
    script where it will be (``final``), not where it was staged. Returns the generated Model."""
    try:
        return _generate_staged(stage, name)
    except AutoTilerError as err:
        where = err.where or ""
        for staged in (str(stage), os.path.relpath(stage)):  # errors name files relative to the cwd
            where = where.replace(staged, final.rstrip(os.sep))
        raise ImportModelError(f"the imported model does not generate: {err.message}", where=where or None,
                               kernel=err.kernel, arg=err.arg, hint=err.hint) from None


def _generate_staged(stage: Path, name: str):
    with tempfile.TemporaryDirectory(prefix="autotiler-import-gen-") as gen:
        reset_default_model()
        saved = sys.argv
        script = str(stage / f"{name}.py")
        sys.argv = [script, "-o", gen, "-q"]
        try:
            runpy.run_path(script, run_name="__main__")
            return current_model()
        except SystemExit as ex:
            if ex.code not in (0, None):
                raise ImportModelError(f"the generated model script {name}.py does not generate (status {ex.code})",
                                       where=script) from None
            return current_model()
        finally:
            sys.argv = saved
            reset_default_model()


def _place(stage: Path, out_dir: Path, entries: list) -> None:
    """Move ``entries`` of ``stage`` into the existing ``out_dir``, replacing ours of a previous
    import; on failure put everything back."""
    backup = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.previous-", dir=out_dir.parent))
    saved, placed = [], []
    try:
        for e in entries:
            if os.path.lexists(out_dir / e):
                os.replace(out_dir / e, backup / e)
                saved.append(e)
        for e in entries:
            os.replace(stage / e, out_dir / e)
            placed.append(e)
    except BaseException:
        for e in placed:
            _remove(out_dir / e)
        for e in saved:
            os.replace(backup / e, out_dir / e)
        raise
    finally:
        shutil.rmtree(backup, ignore_errors=True)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)


def write_atomic(out_dir: str, files: Mapping[str, bytes], check: Optional[Callable[[Path], None]] = None) -> None:
    """Write ``files`` ({relative path: bytes}) into ``out_dir``: staged next to it, checked by
    ``check(stage)``, then moved in (a new directory by one rename; into an existing one, our
    top-level entries replaced, the user's others untouched)."""
    target = Path(os.path.abspath(out_dir))
    if os.path.lexists(target) and not target.is_dir():
        raise ImportModelError(f"output '{out_dir}' exists and is not a directory", hint="give -o a directory")
    made = _make_parents(target.parent, out_dir)
    stage = Path(tempfile.mkdtemp(prefix=f".{target.name}.import-", dir=target.parent))
    done = False
    try:
        for rel, data in files.items():
            path = stage / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        if check is not None:
            check(stage)
        entries = sorted({rel.split("/", 1)[0] for rel in files})
        os.chmod(stage, 0o777 & ~_umask())  # mkdtemp's 0700 would become DIR's mode
        if not os.path.lexists(target):
            os.rename(stage, target)
        else:
            _place(stage, target, entries)
        done = True
    finally:
        shutil.rmtree(stage, ignore_errors=True)
        for d in made if not done else ():
            with contextlib.suppress(OSError):
                d.rmdir()


def _make_parents(parent: Path, out_dir: str) -> list:
    """Create the missing parents of DIR (``mkdir -p``); the ones made, innermost first, so that a
    failed import removes them."""
    missing = []
    p = parent
    while not p.exists():
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        try:
            d.mkdir()
        except OSError as err:
            for m in missing[missing.index(d) + 1:]:
                with contextlib.suppress(OSError):
                    m.rmdir()
            raise ImportModelError(f"cannot create the directory of '{out_dir}': {err.strerror or err}") from None
    if not parent.is_dir():
        raise ImportModelError(f"'{parent}' is not a directory", hint="give -o a path inside a directory")
    return missing


# ---------------------------------------------------------------------------------------------
# The import


@dataclass(frozen=True)
class ImportResult:
    name: str
    directory: str
    graph: Graph
    lowered: L.Lowered
    budgets: Budgets
    report: tuple          # the quantiser's lines (float models), else ()
    descriptor: dict       # NAME.json
    model: object = None   # the Model of the check's generation (tilings, graph): None unchecked
    fusions: tuple = ()    # the fused groups (fuse.Fusion), in execution order
    unfused_peak: int = 0  # peak L2 of the activations layer by layer (the liveness lower bound)


def import_model(model: str, out_dir: str, name: Optional[str] = None, platform: str = "gap8",
                 l1: Optional[int] = None, l2: Optional[int] = None, l3: Optional[int] = None,
                 calibration: Optional[str] = None, check: bool = True, fusion: str = "fit",
                 fuse: tuple = (), no_fuse: tuple = (), fusion_l2: Optional[int] = None) -> ImportResult:
    """Import ``model`` (.tflite or .onnx) into ``out_dir`` (see the module's documentation)."""
    if platform not in PLATFORMS:
        raise ImportModelError(f"unknown platform {platform!r}", hint="platforms: " + ", ".join(sorted(PLATFORMS)))
    if name is not None and not (name.isascii() and name.isidentifier()):
        raise ImportModelError(f"--name {name!r} is not a C identifier (it names the graph, the script and its "
                               "files)", hint=f"e.g. --name {L.c_identifier(name)}")
    name = L.c_identifier(name if name is not None else Path(model).stem)
    source = read_model(model)
    graph, report = _quantized(source, model, calibration)
    lowered = L.lower(graph)
    if report:
        lowered = _float_sources(lowered, source)
    budgets = default_budgets(platform, lowered, l1, l2, l3)
    unfused_peak = F.peak_l2(lowered)
    lowered, fusions = F.fuse(lowered, platform, budgets.l1, budgets.l2, fusion, fuse, no_fuse, fusion_l2)
    desc = descriptor(name, graph, lowered, platform, bool(report))
    desc["fusion"] = {"mode": fusion, "target_l2": fusion_l2, "unfused_peak_l2": unfused_peak, "fused_peak_l2": F.peak_l2(lowered),
                      "groups": [f.to_json() for f in fusions]}
    note = "Quantised by autotiler import from the float model with the calibration data." if report else ""
    files = {f"{name}.py": render(name, lowered, budgets, model, note).encode("utf-8"),
             f"{name}.json": (json.dumps(desc, indent=1,
                                         ensure_ascii=False) + "\n").encode("utf-8"),
             **tensor_files(name, lowered)}
    generated = []
    write_atomic(out_dir, files, (lambda stage: generated.append(_check_generation(stage, name, out_dir)))
                 if check else None)
    return ImportResult(name, out_dir, graph, lowered, budgets, tuple(report), desc,
                        generated[0] if generated else None, fusions, unfused_peak)


def float_interface_only(graph: Graph) -> bool:
    """An int8 model with a float interface: its only float tensors are graph inputs that QUANTIZE
    reads and graph outputs that DEQUANTIZE writes (the lowering keeps the int8 side)."""
    for t in graph.tensors.values():
        if t.dtype != DType.FLOAT32 or t.is_const:
            continue
        users, producer = graph.consumers(t.name), graph.producer(t.name)
        at_input = t.name in graph.inputs and users and all(op.kind == OpKind.QUANTIZE for op in users)
        at_output = (t.name in graph.outputs and producer is not None and producer.kind == OpKind.DEQUANTIZE
                     and not users)
        if not (at_input or at_output):
            return False
    return True


def _float_sources(lowered: L.Lowered, source: Graph) -> L.Lowered:
    """A model quantised here: each port says what the float source takes or gives there."""
    def with_source(ports, names):
        out = []
        for port, name in zip(ports, names):
            t = source.tensor(name)
            shape = [int(d) for d in t.shape]
            if source.source_layout == "NCHW" and len(shape) == 4:
                shape = [shape[0], shape[3], shape[1], shape[2]]
            out.append(port if port.source else replace(port, source={"tensor": name, "shape": shape,
                                                                       "dtype": t.dtype.value}))
        return tuple(out)
    return replace(lowered, inputs=with_source(lowered.inputs, source.inputs),
                   outputs=with_source(lowered.outputs, source.outputs))


def _quantized(graph: Graph, model: str, calibration: Optional[str]) -> tuple:
    if not quantize.is_float(graph) or float_interface_only(graph):
        if calibration is not None:
            raise ImportModelError("--calibration is for float models; this model is already quantised", where=model,
                                   hint="drop --calibration")
        return graph, []
    if calibration is None:
        raise ImportModelError("this is a float model: give calibration data to quantise it", where=model,
                               hint="--calibration FILE.npz, arrays of the input's shape with N samples "
                               "(numpy.savez(FILE, input_name=array))")
    q, lines = quantize.quantize_graph(graph, load_calibration(calibration, graph))
    return q, list(lines)


__all__ = ["Budgets", "ImportResult", "default_budgets", "descriptor", "detect_format", "import_model",
           "load_calibration", "read_model", "render", "tensor_files", "write_atomic"]
