"""Generated files: render models computed in Python, printed by jinja2 templates; the JSON
manifest the host harness reads; atomic writes (all files or none)."""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import math
import os
import re
import shutil
import tempfile
import time
import warnings
from dataclasses import dataclass, replace
from typing import Optional

import jinja2

from .. import __version__
from ..bounds import describe
from ..constants import AT_GraphCtrl_T, Object_Type_T
from ..errors import AutoTilerWarning, CodegenError, ModelError
from ..errors import warn as warn_model
from ..graph.summary import plan_json
from ..model.ctype import VECTORS, parse_ctype
from ..model.devices import AT_MEM_L3_DEFAULT_EXEC, L3_DEVICES, L3Device, flash_device, l3_device
from ..model.graph import NodeArgForm
from ..model.ir import CArgBinding, CArgForm, ImmBinding
from ..model.session import paused_gc
from ..model.validate import carg_homes, group_homes, suggest
from ..objectives import naming, reschedule
from ..schedule.build import build_schedule, transfer_shape
from ..tiler.tiling import KernelTiling
from .graph import graph_args_json, graph_json, render_graph
from .printer import Printer

MANIFEST_FORMAT = "autotiler-manifest/1"




@dataclass
class RenderKernel:
    name: str
    params: list
    comment: list
    body: list
    attributes: str = ""


@dataclass
class RenderGroup:
    name: str
    params: list
    comment: list
    body: list
    attributes: str = ""


# ----------------------------------------------------------------------------------------------
# Comments


def kernel_comment(t: KernelTiling, platform=None) -> list:
    k = t.kernel
    space = " > ".join(f"{_short(lp.space)}[{lp.count}]" for lp in t.loops)
    lines = [
        f"{k.name}: {t.describe()}.",
        f"Iteration space {space}; objective '{t.objective}' over {t.candidates} candidate tiling(s)"
        + (f" ({t.predicted_candidates} predicted exactly)." if t.predicted_candidates < t.candidates else "."),
        f"L2<->L1 traffic: {t.traffic_in} B in, {t.traffic_out} B out.",
    ]
    if t.traffic_l3:
        lines.append(f"L3<->L2 traffic (micro-DMA): {t.traffic_l3_in} B in, {t.traffic_l3_out} B out; "
                     f"L2 staging: {t.l2_bytes} B.")
    for a in t.args:
        move = "in+out" if a.reads and a.writes else "in" if a.reads else "out" if a.writes else "L1 only"
        spaces = ",".join(f"{d.name}{'*' if d.resident and d.iterates else ''}" for d in a.dims if d.space is not None)
        lines.append(f"  {a.name:<10} {a.w}x{a.h}x{a.item}B [{spaces or '-'}] {a.role:<8} {move:<7} "
                     f"L1 @{a.offset}: {a.nbuf} x {a.slot_bytes} B{_move_note(a)}{_l3_note(a)}")
    return lines + describe(t, platform)


def _short(space) -> str:
    return ("T0", "T1", "T2", "D0", "D1", "D2", "D3")[int(space)]


def _move_note(a) -> str:
    if not (a.reads or a.writes):
        return ""
    if a.level is None:
        return ", moved once"
    lines = transfer_shape(a).lines
    dma = "1D" if not lines else "2D"
    if a.l3:
        dma = "2D uDMA, 1D DMA" if lines else "1D uDMA, 1D DMA"
    return f", moved at {_short(a.level)} x{a.instances} ({dma})"


def _l3_note(a) -> str:
    if not a.l3:
        return ""
    rings = " per direction" if a.reads and a.writes else ""
    return f"; home L3, L2 staging @{a.stage_offset}: {a.stage} x {a.box_bytes_max} B{rings}"


# ----------------------------------------------------------------------------------------------
# Groups


def _group_value(b, formal) -> str:
    if isinstance(b, ImmBinding):
        value = str(b.value)
    elif b.form == CArgForm.GROUP_OPER:
        value = f"{b.name} + Iter*({b.value})" if b.oper == "*" else f"{b.name} {b.oper} ({b.value})"
    elif b.form == CArgForm.PLUS_IMM:
        value = f"{b.name} + {b.value}"
    elif b.form == CArgForm.INDIRECT:
        value = f"*({b.name} + {b.value})"
    else:
        value = b.name
    return f"({formal.ctype}) ({value})"


def noinline(model) -> str:
    """The attribute AT_GRAPH_NOINLINE_NODE puts on every generated function a graph node calls."""
    return "__attribute__ ((noinline)) " if model.graph_ctrl.get(AT_GraphCtrl_T.AT_GRAPH_NOINLINE_NODE) else ""


def render_group(group, kernels: dict, attributes: str = "") -> RenderGroup:
    calls = []
    for call in group.calls:
        callee = kernels[call.name]
        args = [_group_value(b, formal) for b, formal in zip(call.bindings, callee.cargs)]
        calls.append(f"{call.name}(" + ", ".join(args) + ");" if args else f"{call.name}();")
    body = calls
    comment = [f"{group.name}: kernel group calling " + ", ".join(c.name for c in group.calls) + " in order"
               + (f", {group.iterations} times." if group.iterations > 1 else ".")]
    if group.iterations > 1:
        body = ["int Iter;", f"for (Iter=0; Iter<{group.iterations}; Iter++) {{"] + [f"\t{c}" for c in calls] + ["}"]
    return RenderGroup(group.name, [f"{c.ctype} {c.name}" for c in group.cargs], comment, body, attributes)


# ----------------------------------------------------------------------------------------------
# Files


def _template_dir() -> str:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    installed = os.path.join(here, "templates")
    return installed if os.path.isdir(installed) else os.path.join(os.path.dirname(here), "templates")


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    """One environment per process: it compiles each template once (and again when the file
    changes: the loader checks its modification time)."""
    return jinja2.Environment(loader=jinja2.FileSystemLoader(_template_dir()), undefined=jinja2.StrictUndefined,
                              keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)


def _guard(name: str) -> str:
    return "__" + re.sub(r"[^A-Za-z0-9]", "_", name).upper() + "__"


def uses_l3(model) -> bool:
    return any(a.l3 for t in model.tilings.values() for a in t.args)


def render_kernel(model, name: str) -> RenderKernel:
    t = model.tilings[name]
    names = naming(model)
    schedule = t.schedule
    if schedule.naming != names:  # symbols renamed after the kernel was declared
        schedule = build_schedule(t, model.libs, names, model.platform)
    body = Printer(schedule, names.family, names.device).body()
    attributes = noinline(model)
    return RenderKernel(name, [f"{c.ctype} {c.name}" for c in t.kernel.cargs], kernel_comment(t, model.platform),
                        body, attributes)


def variant_tiling(model, v, l2_dyn: str) -> KernelTiling:
    """A graph node's kernel variant (:class:`~autotiler.graph.lower.NodeVariant`) as generated:
    its L2 staging moved to the node's slot in the graph's dynamic L2 area (``l2_dyn`` + the
    slot's offset) and its schedule rebuilt, verified and predicted on those names."""
    t = v.tiling
    args = tuple(replace(a, stage_offset=a.stage_offset + v.offset) if a.l3 else a for a in t.args)
    names = naming(model)
    # the L2 "symbol" the schedule addresses is the dynamic area, up to the end of the node's slot
    return reschedule(replace(t, args=args, l2_bytes=v.offset + t.l2_bytes), model.libs, model.platform,
                      replace(names, l2=l2_dyn))


def render_variant(model, v, t: KernelTiling, graph: str) -> RenderKernel:
    names = naming(model)
    body = Printer(t.schedule, names.family, names.device).body()
    attributes = noinline(model)
    where = "read from flash" if v.flash else "in L3 RAM"
    comment = [f"Graph {graph}, node {v.node}: {v.kernel} with {', '.join(v.l3_cargs)} {where} (L2 staging "
               f"{v.staging} B at {t.schedule.naming.l2} + {v.offset})."] + kernel_comment(replace(t, l2_bytes=v.staging),
                                                                                 model.platform)
    return RenderKernel(v.name, [f"{c.ctype} {c.name}" for c in t.kernel.cargs], comment, body, attributes)


def generate(model) -> dict:
    """All generated files of a model as ``{file name: text}`` (nothing is written; an
    AutoTilerWarning names every kernel declared without a tiling and never declared again)."""
    for name, err in model.unsolved.items():
        if name not in model.kernels:
            warnings.warn(f"{err}; AT_KERNEL_NOSOLUTION_ERROR is off, so no code is generated for it",
                          AutoTilerWarning, stacklevel=2)
    for name, where in model.per_kernel_objective_where.items():
        if name not in model.kernels and name not in model.unsolved:
            raise ModelError(f"SetTilingObjective(..., '{name}'): no user kernel '{name}' was declared", where=where,
                             hint="name a kernel declared after it" + suggest(name, model.kernels))
    with paused_gc():
        return _generate(model)


def _generate(model) -> dict:
    """What generate() returns, once its checks have passed."""
    files = model.files
    sym = model.symbols
    l1_size = max((t.l1_bytes for t in model.tilings.values()), default=0)
    l2_size = max((t.l2_bytes for t in model.tilings.values()), default=0)
    kernels = [render_kernel(model, n) for n in model.kernels]
    groups = [render_group(g, model.kernels, noinline(model)) for g in model.groups.values()]
    graphs = [render_graph(model, g, l1_size) for g in model.graphs.values()]
    # kernel variants of the nodes touching activations spilled to L3 (re-tiled: their L1 may be larger)
    variants = [(v, variant_tiling(model, v, r.l2_dyn), r.name) for r, p in graphs for v in p.variants]
    if any(t.l1_bytes > l1_size for _, t, _ in variants):
        l1_size = max(t.l1_bytes for _, t, _ in variants)
        graphs = [render_graph(model, g, l1_size, plan) for g, (_, plan) in zip(model.graphs.values(), graphs)]
    kernels += [render_variant(model, v, t, g) for v, t, g in variants]
    graph_l3 = any(p.l3 is not None for _, p in graphs)
    # the flashes the nodes' kernel variants read constants from (AT_GRAPH_CONST_EXEC_FROM_FLASH)
    exec_flash = list(dict.fromkeys(flash_device(s.flash_loc) for _, p in graphs for s in p.symbols
                                    if s.area == "flash_exec"))
    ctx = {
        "version": __version__, "source": os.path.basename(_model_source(model)), "std_types": files.std_types,
        "lib_headers": list(files.lib_headers), "l1": sym.l1, "l1_size": l1_size, "l1_budget": model.l1_budget,
        # a graph's constructor allocates the L1 symbol: it is a pointer
        "dynamic": sym.dynamic or bool(graphs), "kernels": kernels, "l2": sym.l2, "l2_size": l2_size, "l2_budget": model.l2_budget,
        "l3_devices": ([l3_device(model)] if uses_l3(model) or graph_l3 else []) + exec_flash, "groups": groups,
        "h_file": files.kernels_h,
        "h_guard": _guard(files.kernels_h), "init_h": files.init_h, "init_guard": _guard(files.init_h or "x"),
        "symbols_in_init": files.init_c is not None, "graphs": [r for r, _ in graphs],
    }
    env = _environment()
    out = {
        files.kernels_h: env.get_template("kernels.h.j2").render(**ctx),
        files.kernels_c: env.get_template("kernels.c.j2").render(**ctx),
    }
    if files.init_c:
        out[files.init_h] = env.get_template("init.h.j2").render(**ctx)
        out[files.init_c] = env.get_template("init.c.j2").render(**ctx)
    for r, plan in graphs:   # the constants' flash images, opened by <G>_Construct
        for dev, (_, image) in zip(r.flashes, plan.flashes):
            out[dev.file] = image.data
    data = manifest(model, l1_size, l2_size, graphs=graphs)
    # the node variants' tilings, beside the user kernels' (the graph plan lists them by node)
    data["tilings"].update({v.name: tiling_json(t) for v, t, _ in variants})
    data["set"] = file_set(out)
    out[manifest_name(files.kernels_c)] = json.dumps(data, indent=1, sort_keys=True) + "\n"
    return out


def _bytes(content) -> bytes:
    """A generated file's bytes: text as UTF-8, binary files (a graph's flash image) as they are."""
    return content if isinstance(content, bytes) else content.encode("utf-8")


def file_set(files: dict) -> dict:
    """``{"id": ..., "files": {name: sha256}}`` of the generated files (the manifest excluded):
    the harness refuses a directory whose files do not match. The id is a hash of the set, so
    that the same model generates the same bytes."""
    hashes = {name: hashlib.sha256(_bytes(text)).hexdigest() for name, text in sorted(files.items())}
    ident = hashlib.sha256("".join(f"{n}\0{h}\n" for n, h in hashes.items()).encode()).hexdigest()
    return {"id": ident, "files": hashes}


def _model_source(model) -> str:
    kernels = list(model.kernels.values())
    return kernels[0].where.rsplit(":", 1)[0] if kernels else "model"


def manifest_name(c_file: str) -> str:
    return os.path.splitext(c_file)[0] + ".json"


def manifest(model, l1_size: int, l2_size: int, specs: Optional[dict] = None, graphs=()) -> dict:
    """Machine-readable description of the generated code (read by the host harness);
    ``graphs``: (RenderGraph, GraphPlan) of each graph."""
    files = model.files
    specs = arg_specs(model) if specs is None else specs
    funcs = [{"name": k.name, "args": [_arg_json(c, specs[k.name][c.name]) for c in k.cargs], "kind": "user_kernel"}
             for k in model.kernels.values()]
    funcs += [{"name": g.name, "args": [_arg_json(c, specs[g.name][c.name]) for c in g.cargs], "kind": "group",
               "calls": [c.name for c in g.calls if c.name in model.kernels], "iterations": g.iterations}
              for g in model.groups.values()]
    c_files = [files.kernels_c] + ([files.init_c] if files.init_c else [])
    out = {
        "format": MANIFEST_FORMAT, "c_files": c_files, "header": files.kernels_h,
        "platform": model.platform.name,
        "l1": {"symbol": model.symbols.l1, "size": l1_size, "dynamic": model.symbols.dynamic or bool(graphs)},
        "l2": {"symbol": model.symbols.l2, "size": l2_size, "dynamic": model.symbols.dynamic},
        "kernels": funcs,
        "tilings": {n: tiling_json(t) for n, t in model.tilings.items()},
    }
    if graphs:
        out["graphs"] = [{**graph_json(r, interface_shapes(model, model.graphs[r.name], graph_args_json(
                              model, model.graphs[r.name], specs, _arg_json, _plain_spec))),
                          "plan": plan_json(p, model.graphs[r.name].options.l2_static_memory_budget),
                          "fusions": [f.to_json() for f in model.fusions.get(r.name, ())]}
                         for r, p in graphs]
    libraries = [LIBRARIES[h] for h in files.lib_headers if h in LIBRARIES]
    if libraries:
        out["libraries"] = libraries
    if uses_l3(model):
        dev = l3_device(model)
        out["l3"] = {"devices": [{"family": dev.family, "symbol": dev.symbol}]}
    return out


# The basic-kernel libraries a generated directory needs, by the header a model script names in
# SetUsedFilesNames: the manifest lists them so that ``autotiler build``/``run`` need no --sources
# (autotiler.command maps each name to its C sources and include directory).
LIBRARIES = {"CNN_BasicKernels.h": "CNN", "CNN_SQ8_BasicKernels.h": "CNN_SQ8"}


def interface_shapes(model, graph, args: list) -> list:
    """A graph parameter's ``shape`` from ``AddKernelArgDim`` of a kernel argument it is bound to
    whole, where those dims hold its items in one C element each (an HWC feature map as
    ``[H, W, C]``, or an imported model's ``[1, H, W, C]``), instead of the tiled layout
    (``[1, H, W*C]``): the shape a user has in hand."""
    out = []
    for data in args:
        dims = _declared_dims(model, graph, data) if data.get("pointer") and data.get("items") else None
        out.append({**data, "shape": list(dims)} if dims else data)
    return out


def _declared_dims(model, graph, data: dict) -> Optional[tuple]:
    esize = _item_bytes(data.get("dtype"))
    for node in graph.nodes:
        callee = model.kernels.get(node.name)
        if callee is None:
            continue
        for b, formal in zip(node.args, callee.cargs):
            if b.symbol != data["name"] or b.form != NodeArgForm.PLAIN:
                continue
            kerargs = [a.name for a in callee.kerargs if a.carg_name == formal.name]
            found = [model.arg_dims[(node.name, k)] for k in kerargs if (node.name, k) in model.arg_dims]
            if not found:
                continue
            dims, is_float = found[0]
            if dims[-1] == esize and math.prod(dims[:-1]) == data["items"] and is_float == data.get("float", False):
                return tuple(dims[:-1])
    return None


def arg_homes(model) -> dict:
    """{function: {C argument: "L3"}} for pointers into L3."""
    homes = {name: carg_homes(k) for name, k in model.kernels.items()}
    homes.update({g.name: group_homes(g, model.kernels) for g in model.groups.values()})
    return homes


def _plain_spec(ctype: str) -> ArgSpec:
    """The spec of a C argument bound to no kernel argument: its element type only."""
    return ArgSpec(*c_element(ctype))


def _arg_json(c, spec: ArgSpec) -> dict:
    """A C argument for the harness: its C type, the element type (the pointee for a pointer) and
    the little-endian numpy dtype of it (null: no numpy equivalent), and for a pointer its shape
    in items and its number of items (null: unknown; the shape also when the kernel argument's
    item is not one C element, e.g. a whole filter) and direction (null: not bound to a kernel
    argument)."""
    out = {"name": c.name, "ctype": c.ctype, "pointer": c.is_pointer, "float": c.is_float,
           "elem": spec.elem, "dtype": spec.dtype}
    if c.is_pointer:
        out["shape"] = list(spec.shape) if spec.shape is not None else None
        out["items"] = spec.items
        out["direction"] = spec.direction
    if spec.home == "L3":
        out["home"] = "L3"
    return out


# ----------------------------------------------------------------------------------------------
# C element types, shapes and directions of the arguments (what the harness checks)

def c_element(ctype: str) -> tuple:
    """(element type, numpy dtype or None) of a C argument type: the pointee of a one-level
    pointer, the type itself for a scalar; typedefs of Gap.h resolved (``Word32 *`` -> ``int``,
    ``<i4``). Unknown types (structs, user typedefs, void) keep their spelling and have no dtype."""
    t = parse_ctype(ctype)
    if t.base == "function":
        return "function pointer", None
    if t.pointers > 1:
        return "pointer", None
    return t.element, t.dtype


@dataclass(frozen=True)
class ArgSpec:
    """What the harness checks of one C argument (see _arg_json); ``nbytes``: its L2 (or L3)
    size where known."""

    elem: str
    dtype: Optional[str]
    shape: Optional[tuple] = None
    direction: Optional[str] = None
    home: str = "L2"
    nbytes: Optional[int] = None
    items: Optional[int] = None


def _item_bytes(dtype: Optional[str]) -> Optional[int]:
    return int(dtype[2:]) if dtype else None


def _direction(is_in: bool, is_out: bool) -> Optional[str]:
    return "inout" if is_in and is_out else "in" if is_in else "out" if is_out else None


def _layout(g) -> Optional[tuple]:
    """An argument's L2 array as items: (outer non-tiled spaces..., H, W), at least 3 dims."""
    if not g.l2_bytes:
        return None
    items = g.l2_bytes // g.item
    dims = [r.dim for r in g.refs] + [g.h, g.w]
    if math.prod(dims) != items:  # NextPlaneUpdate spreads the planes out
        dims = [items // (g.h * g.w), g.h, g.w]
    return tuple([1] * (3 - len(dims)) + dims)


def _kernel_specs(t: KernelTiling, homes: dict) -> dict:
    out = {}
    for c in t.kernel.cargs:
        elem, dtype = c_element(c.ctype)
        bound = [g for g in t.geom.args if g.decl.carg_name == c.name] if c.is_pointer else []
        shapes = {(_layout(g), g.item) for g in bound}
        shape = nbytes = items = None
        esize = _item_bytes(dtype) if elem not in VECTORS else None
        if len(shapes) == 1:
            layout, item = shapes.pop()
            nbytes = math.prod(layout) * item if layout else None
            if nbytes and esize and nbytes % esize == 0:
                items = nbytes // esize
                shape = layout if item == esize else None
        direction = _direction(any(g.decl.is_in for g in bound), any(g.decl.is_out for g in bound))
        out[c.name] = ArgSpec(elem, dtype, shape, direction, homes.get(c.name, "L2"), nbytes, items)
    return out


def _group_specs(group, kernel_specs: dict, model, homes: dict) -> dict:
    """A group's pointer takes the shape of the kernel arguments it is passed to whole (C_Arg),
    if they agree; passed with an offset anywhere, its extent is unknown."""
    uses: dict = {c.name: [] for c in group.cargs}
    for call in group.calls:
        callee = model.kernels.get(call.name)
        if callee is None:
            continue
        for b, formal in zip(call.bindings, callee.cargs):
            if isinstance(b, CArgBinding) and b.name in uses:
                uses[b.name].append((b.form == CArgForm.PLAIN, kernel_specs[call.name][formal.name]))
    flags = {a.carg_name: a.obj_type for a in group.kerargs if a.carg_name}
    out = {}
    for c in group.cargs:
        elem, dtype = c_element(c.ctype)
        mine = uses[c.name]
        found = {(s.shape, s.nbytes, s.items) for _, s in mine}
        shape = nbytes = items = None
        if mine and all(whole for whole, _ in mine) and len(found) == 1:
            shape, nbytes, items = found.pop()
            if _item_bytes(dtype) != _item_bytes(mine[0][1].dtype) or elem != mine[0][1].elem:
                shape = items = None
        obj = flags.get(c.name, 0)
        is_in = bool(obj & Object_Type_T.O_IN) or any(s.direction in ("in", "inout") for _, s in mine)
        is_out = bool(obj & Object_Type_T.O_OUT) or any(s.direction in ("out", "inout") for _, s in mine)
        out[c.name] = ArgSpec(elem, dtype, shape if c.is_pointer else None,
                              _direction(is_in, is_out) if c.is_pointer else None, homes.get(c.name, "L2"), nbytes,
                              items if c.is_pointer else None)
    return out


def arg_specs(model) -> dict:
    """{function: {C argument: ArgSpec}} of every user kernel and group."""
    homes = arg_homes(model)
    specs = {name: _kernel_specs(model.tilings[name], homes[name]) for name in model.kernels}
    for g in model.groups.values():
        specs[g.name] = _group_specs(g, specs, model, homes[g.name])
    return specs


def check_l2_fit(model) -> None:
    """An AutoTilerWarning for each user kernel or group whose L2-homed arguments, with the
    generated L2 symbol, do not fit the L2 of the model's platform: the code is generated (the
    original does; the application may run it on a chip with more L2) but cannot run on that
    chip. GenerateTilingCode() calls it."""
    capacity = model.platform.l2_size
    specs = arg_specs(model)
    l2_size = max((t.l2_bytes for t in model.tilings.values()), default=0)
    where = {**{k.name: k.where for k in model.kernels.values()}, **{g.name: g.where for g in model.groups.values()}}
    for name, args in specs.items():
        sizes = {a: s.nbytes for a, s in args.items() if s.home == "L2" and s.nbytes}
        total = sum(sizes.values()) + l2_size
        if total > capacity:
            parts = ", ".join(f"{a} {n} B" for a, n in sizes.items())
            symbol = f" and {model.symbols.l2} {l2_size} B" if l2_size else ""
            warn_model(f"its L2 arguments need {total} bytes ({parts}{symbol}) but the L2 of platform "
                       f"'{model.platform.name}' is {capacity} bytes: the code cannot run on that chip",
                       where=where.get(name), kernel=name,
                       hint="home the large arguments in L3 (an _L2DB object type, or SetKerArgInL3), or "
                            "generate for a platform with a larger L2 (Model(get_platform(..., l2_size=N)))")


def tiling_json(t: KernelTiling) -> dict:
    return {
        "ntiles": t.ntiles, "l1_bytes": t.l1_bytes, "budget": t.budget, "promoted": t.promoted,
        "objective": t.objective, "traffic_in": t.traffic_in, "traffic_out": t.traffic_out,
        "loops": [[_short(lp.space), lp.count] for lp in t.loops],
        "l2_bytes": t.l2_bytes, "traffic_l3_in": t.traffic_l3_in, "traffic_l3_out": t.traffic_l3_out,
        "args": [{"name": a.name, "role": a.role, "offset": a.offset, "nbuf": a.nbuf, "slot_bytes": a.slot_bytes,
                  "tile_std": a.tile_std, "tile_last": a.tile_last, "reads": a.reads, "writes": a.writes,
                  **({"home": "L3", "stage": a.stage, "stage_offset": a.stage_offset} if a.l3 else {})}
                 for a in t.args],
    }


# ----------------------------------------------------------------------------------------------
# Writing a set of files: all or none, also when the process is killed
#
# The files are written into a staging directory, ``.autotiler-stage-*``, inside the output
# directory. Renaming it to ``.autotiler-commit`` is the commit point: from then on the journal
# holds what is needed to finish the generation (``new/``, the files not moved yet) or to undo it
# (``old/``, each replaced file set aside; ``absent/``, a marker for each file that did not
# exist; ``order``, the names, the manifest last). A generation that fails undoes what it did
# after renaming the journal ``.autotiler-rollback``. Whoever finds a journal left by a killed
# process (the next generation, or the harness reading the directory) finishes the generation,
# or undoes it where it cannot: the directory holds the previous set or the new one. Writers
# and readers hold an flock on the directory itself (exclusive / shared), so that a live
# generation is never taken for a dead one; a staging directory found under the exclusive lock
# is a killed generation's and is removed.

JOURNAL = ".autotiler-commit"
ROLLBACK = ".autotiler-rollback"
STAGE_PREFIX = ".autotiler-stage-"
LOCK_TIMEOUT = 600.0  # seconds to wait for another generation or build using the directory


class _CommitError(OSError):
    def __init__(self, name: str, err: OSError):
        super().__init__(err.errno, err.strerror)
        self.name = name


class OutputLockTimeout(OSError):
    """Another process held the directory's lock for LOCK_TIMEOUT seconds."""


class RecoveryError(OSError):
    """A journal left by a killed generation could neither be finished nor undone."""

    def __init__(self, path: str, err: OSError):
        super().__init__(err.errno, f"{path}: {err.strerror}")
        self.path = path


@contextlib.contextmanager
def output_lock(path: str, exclusive: bool, timeout: Optional[float] = None):
    """flock the directory ``path`` (shared or exclusive) for the ``with`` block, waiting up to
    ``timeout`` (LOCK_TIMEOUT) seconds; a directory that does not exist, or a file system
    without locks, is not locked."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        yield
        return
    try:
        wait = LOCK_TIMEOUT if timeout is None else timeout
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise OutputLockTimeout(0, f"'{path}' is locked by another generation or build (waited "
                                               f"{wait:g} s)") from None
                time.sleep(0.02)
            except OSError:
                break
        yield
    finally:
        os.close(fd)


def _discard(journal: str) -> None:
    """Remove a journal that is done: renamed first (atomically) into a staging name, so that a
    kill half-way through the removal leaves stale staging, not a damaged journal."""
    done = tempfile.mkdtemp(prefix=STAGE_PREFIX + "done-", dir=os.path.dirname(journal))
    try:
        os.rename(journal, done)  # onto the empty directory
    except OSError:
        shutil.rmtree(journal, ignore_errors=True)
    shutil.rmtree(done, ignore_errors=True)


def _names(journal: str) -> list:
    with open(os.path.join(journal, "order"), encoding="utf-8") as f:
        return json.load(f)


def _roll_forward(output_dir: str, journal: str, names: list) -> None:
    """Move every file of ``new/`` into place, setting aside the one it replaces; idempotent, so
    that a generation killed half-way is finished by running it again."""
    for name in names:
        new, dest = os.path.join(journal, "new", name), os.path.join(output_dir, name)
        if not os.path.lexists(new):
            continue  # moved already
        old, absent = os.path.join(journal, "old", name), os.path.join(journal, "absent", name)
        if not (os.path.lexists(old) or os.path.lexists(absent)):
            if os.path.isfile(dest) or os.path.islink(dest):
                os.replace(dest, old)
            else:
                open(absent, "w").close()
        try:
            os.replace(new, dest)
        except OSError as err:
            raise _CommitError(name, err) from None


def _roll_back(output_dir: str, journal: str) -> bool:
    """Put back what a journal replaced, then remove it; False (the journal kept, as
    ``.autotiler-rollback``) when a file could not be put back."""
    rollback = os.path.join(output_dir, ROLLBACK)
    if journal != rollback:
        os.rename(journal, rollback)
    done = True
    for name in reversed(_names(rollback)):
        dest = os.path.join(output_dir, name)
        old, absent = os.path.join(rollback, "old", name), os.path.join(rollback, "absent", name)
        moved = not os.path.lexists(os.path.join(rollback, "new", name))
        try:
            if os.path.lexists(old):
                os.replace(old, dest)
            elif os.path.lexists(absent) and moved and (os.path.isfile(dest) or os.path.islink(dest)):
                os.remove(dest)
        except OSError:
            done = False
    if done:
        _discard(rollback)
    return done


def recover(output_dir: str) -> Optional[str]:
    """Finish (or undo) a generation killed while it moved its files into ``output_dir``; the
    caller holds the exclusive lock. Returns "finished", "undone" or None (nothing to do);
    RecoveryError when the journal can be neither."""
    journal, rollback = os.path.join(output_dir, JOURNAL), os.path.join(output_dir, ROLLBACK)
    try:
        if os.path.isdir(journal):
            try:
                _roll_forward(output_dir, journal, _names(journal))
            except _CommitError:
                if _roll_back(output_dir, journal):
                    return "undone"
                raise
            _discard(journal)
            return "finished"
        if os.path.isdir(rollback):
            if not _roll_back(output_dir, rollback):
                raise OSError(0, "a replaced file could not be put back")
            return "undone"
    except (OSError, ValueError) as err:
        raise RecoveryError(journal if os.path.isdir(journal) else rollback,
                            err if isinstance(err, OSError) else OSError(0, str(err))) from None
    return None


def settle(output_dir: str) -> Optional[str]:
    """``recover`` under the exclusive lock, if there is a journal to recover."""
    if not any(os.path.isdir(os.path.join(output_dir, j)) for j in (JOURNAL, ROLLBACK)):
        return None
    with output_lock(output_dir, exclusive=True):
        return recover(output_dir)


def _remove_stale(output_dir: str) -> None:
    """Staging directories of killed generations (the caller holds the exclusive lock)."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(output_dir):
            if entry.name.startswith(".autotiler-") and entry.name not in (JOURNAL, ROLLBACK) and entry.is_dir():
                shutil.rmtree(entry.path, ignore_errors=True)


def _stage(files: dict, output_dir: str) -> str:
    """The files written into a new staging directory, with their order (the manifest last)."""
    stage = tempfile.mkdtemp(prefix=STAGE_PREFIX, dir=output_dir)
    try:
        for sub in ("new", "old", "absent"):
            os.mkdir(os.path.join(stage, sub))
        for name, text in files.items():
            with open(os.path.join(stage, "new", name), "wb") as f:
                f.write(_bytes(text))
        order = sorted(files, key=lambda n: n.endswith(".json"))  # stable: the manifest(s) last
        with open(os.path.join(stage, "order"), "w", encoding="utf-8") as f:
            json.dump(order, f)
    except OSError:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return stage


def write_files(files: dict, output_dir: str, where: Optional[str] = None) -> list:
    """Write all files or none, also when the process is killed at any moment (see above: the
    journal is finished or undone by whoever finds it). On a failure the files already moved
    are taken back and the ones set aside restored. ``where``: the GenerateTilingCode line."""
    try:
        os.makedirs(output_dir, exist_ok=True)
    except OSError as err:
        raise CodegenError(f"cannot create output directory '{output_dir}': {err.strerror}", where=where,
                           hint="check the -o directory and its permissions") from None
    journal = os.path.join(output_dir, JOURNAL)
    try:
        with output_lock(output_dir, exclusive=True):
            recover(output_dir)
            _remove_stale(output_dir)
            os.rename(_stage(files, output_dir), journal)  # the commit point
            names = _names(journal)
            try:
                _roll_forward(output_dir, journal, names)
            except OSError:
                if not _roll_back(output_dir, journal):
                    raise RecoveryError(os.path.join(output_dir, ROLLBACK), OSError(0, "a replaced file could not "
                                        "be put back")) from None
                raise
            _discard(journal)
    except _CommitError as err:
        raise CodegenError(f"cannot write generated files into '{output_dir}' ('{err.name}': {err.strerror}); "
                           "nothing was written", where=where, hint="remove or rename what is in the way, or choose "
                           "another -o directory") from None
    except OutputLockTimeout as err:
        raise CodegenError(f"cannot write generated files: {err.strerror}", where=where,
                           hint="wait for it to finish, or choose another -o directory") from None
    except RecoveryError as err:
        raise CodegenError(f"cannot write generated files into '{output_dir}': an interrupted generation could "
                           f"not be finished or undone ({err.strerror})", where=where,
                           hint=f"check the files in {err.path} (old/: the previous ones), put back what you want "
                           "and remove it") from None
    except OSError as err:
        raise CodegenError(f"cannot write generated files into '{output_dir}': {err.strerror}", where=where,
                           hint="check the -o directory and its permissions") from None
    return [os.path.join(output_dir, name) for name in files]


__all__ = ["MANIFEST_FORMAT", "L3Device", "L3_DEVICES", "AT_MEM_L3_DEFAULT_EXEC", "RenderKernel", "RenderGroup",
           "kernel_comment", "render_group", "l3_device", "manifest_name", "uses_l3", "render_kernel", "generate", "manifest",
           "arg_homes", "tiling_json", "write_files", "arg_specs", "c_element", "check_l2_fit", "file_set",
           "output_lock", "recover", "settle", "JOURNAL", "ROLLBACK", "STAGE_PREFIX", "OutputLockTimeout",
           "RecoveryError"]
