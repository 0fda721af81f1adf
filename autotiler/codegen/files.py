"""Generated files: render models computed in Python, printed by jinja2 templates; the JSON
manifest the host harness reads; atomic writes (all files or none)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
import warnings
from dataclasses import dataclass
from typing import Optional

import jinja2

from .. import __version__
from ..bounds import describe
from ..constants import AT_GraphCtrl_T, AT_MemLocation_T
from ..errors import AutoTilerWarning, CodegenError, ModelError
from ..model.ir import CArgForm, ImmBinding
from ..model.validate import carg_homes, group_homes, suggest
from ..schedule.build import Naming, build_schedule, transfer_shape
from ..tiler.tiling import KernelTiling
from .printer import Printer

MANIFEST_FORMAT = "autotiler-manifest/1"


@dataclass(frozen=True)
class L3Device:
    """An external RAM as generated code names it: macro family and device symbol."""

    family: str     # AT_<family>_CL_COPY, ...
    symbol: str     # the AT_<family>_T the application opens


# Where L3-homed (O_L2DB) user-kernel arguments execute from: AT_GRAPH_PREF_L3_EXEC.
L3_DEVICES = {
    AT_MemLocation_T.AT_MEM_L3_HRAM: L3Device("HYPERRAM", "HyperRam"),
    AT_MemLocation_T.AT_MEM_L3_QSPIRAM: L3Device("QSPIRAM", "QspiRam"),
    AT_MemLocation_T.AT_MEM_L3_OSPIRAM: L3Device("OSPIRAM", "OspiRam"),
    AT_MemLocation_T.AT_MEM_L3_DEFAULTRAM: L3Device("DEFAULTRAM", "DefaultRam"),
}
AT_MEM_L3_DEFAULT_EXEC = AT_MemLocation_T.AT_MEM_L3_HRAM  # the original's default


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


def render_group(group, kernels: dict) -> RenderGroup:
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
    return RenderGroup(group.name, [f"{c.ctype} {c.name}" for c in group.cargs], comment, body)


# ----------------------------------------------------------------------------------------------
# Files


def _template_dir() -> str:
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    installed = os.path.join(here, "templates")
    return installed if os.path.isdir(installed) else os.path.join(os.path.dirname(here), "templates")


def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(_template_dir()), undefined=jinja2.StrictUndefined,
                              keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)


def _guard(name: str) -> str:
    return "__" + re.sub(r"[^A-Za-z0-9]", "_", name).upper() + "__"


def l3_device(model) -> L3Device:
    return L3_DEVICES[model.graph_ctrl.get(AT_GraphCtrl_T.AT_GRAPH_PREF_L3_EXEC, AT_MEM_L3_DEFAULT_EXEC)]


def uses_l3(model) -> bool:
    return any(a.l3 for t in model.tilings.values() for a in t.args)


def naming(model) -> Naming:
    """The C names of the model's memory symbols, L3 device and loop variables."""
    dev = l3_device(model)
    sym = model.symbols
    return Naming(sym.l1, sym.l2, dev.family, dev.symbol, sym.old_style_names)


def render_kernel(model, name: str) -> RenderKernel:
    t = model.tilings[name]
    names = naming(model)
    schedule = t.schedule
    if schedule.naming != names:  # symbols renamed after the kernel was declared
        schedule = build_schedule(t, model.libs, names)
    body = Printer(schedule, names.family, names.device).body()
    attributes = "__attribute__ ((noinline)) " if model.graph_ctrl.get(AT_GraphCtrl_T.AT_GRAPH_NOINLINE_NODE) else ""
    return RenderKernel(name, [f"{c.ctype} {c.name}" for c in t.kernel.cargs], kernel_comment(t, model.platform),
                        body, attributes)


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
    files = model.files
    sym = model.symbols
    l1_size = max((t.l1_bytes for t in model.tilings.values()), default=0)
    l2_size = max((t.l2_bytes for t in model.tilings.values()), default=0)
    kernels = [render_kernel(model, n) for n in model.kernels]
    groups = [render_group(g, model.kernels) for g in model.groups.values()]
    ctx = {
        "version": __version__, "source": os.path.basename(_model_source(model)), "std_types": files.std_types,
        "lib_headers": list(files.lib_headers), "l1": sym.l1, "l1_size": l1_size, "l1_budget": model.l1_budget,
        "dynamic": sym.dynamic, "kernels": kernels, "l2": sym.l2, "l2_size": l2_size, "l2_budget": model.l2_budget,
        "l3_devices": [l3_device(model)] if uses_l3(model) else [], "groups": groups, "h_file": files.kernels_h,
        "h_guard": _guard(files.kernels_h), "init_h": files.init_h, "init_guard": _guard(files.init_h or "x"),
        "symbols_in_init": files.init_c is not None,
    }
    env = _environment()
    out = {
        files.kernels_h: env.get_template("kernels.h.j2").render(**ctx),
        files.kernels_c: env.get_template("kernels.c.j2").render(**ctx),
    }
    if files.init_c:
        out[files.init_h] = env.get_template("init.h.j2").render(**ctx)
        out[files.init_c] = env.get_template("init.c.j2").render(**ctx)
    out[manifest_name(files.kernels_c)] = json.dumps(manifest(model, l1_size, l2_size), indent=1,
                                                       sort_keys=True) + "\n"
    return out


def _model_source(model) -> str:
    kernels = list(model.kernels.values())
    return kernels[0].where.rsplit(":", 1)[0] if kernels else "model"


def manifest_name(c_file: str) -> str:
    return os.path.splitext(c_file)[0] + ".json"


def manifest(model, l1_size: int, l2_size: int) -> dict:
    """Machine-readable description of the generated code (read by the host harness)."""
    files = model.files
    homes = arg_homes(model)
    funcs = [{"name": k.name, "args": [_arg_json(c, homes[k.name]) for c in k.cargs], "kind": "user_kernel"}
             for k in model.kernels.values()]
    funcs += [{"name": g.name, "args": [_arg_json(c, homes[g.name]) for c in g.cargs], "kind": "group",
               "calls": [c.name for c in g.calls if c.name in model.kernels], "iterations": g.iterations}
              for g in model.groups.values()]
    c_files = [files.kernels_c] + ([files.init_c] if files.init_c else [])
    out = {
        "format": MANIFEST_FORMAT, "c_files": c_files, "header": files.kernels_h,
        "l1": {"symbol": model.symbols.l1, "size": l1_size, "dynamic": model.symbols.dynamic},
        "l2": {"symbol": model.symbols.l2, "size": l2_size, "dynamic": model.symbols.dynamic},
        "kernels": funcs,
        "tilings": {n: tiling_json(t) for n, t in model.tilings.items()},
    }
    if uses_l3(model):
        dev = l3_device(model)
        out["l3"] = {"devices": [{"family": dev.family, "symbol": dev.symbol}]}
    return out


def arg_homes(model) -> dict:
    """{function: {C argument: "L3"}} for pointers into L3."""
    homes = {name: carg_homes(k) for name, k in model.kernels.items()}
    homes.update({g.name: group_homes(g, model.kernels) for g in model.groups.values()})
    return homes


def _arg_json(c, homes: dict) -> dict:
    out = {"name": c.name, "ctype": c.ctype, "pointer": c.is_pointer, "float": c.is_float}
    if homes.get(c.name) == "L3":
        out["home"] = "L3"
    return out


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


def write_files(files: dict, output_dir: str, where: Optional[str] = None) -> list:
    """Write all files or none: render into a staging directory inside ``output_dir``, then move
    each into place, setting aside the file it replaces; on a failure the files already moved
    are taken back and the ones set aside restored. ``where``: the GenerateTilingCode line."""
    try:
        os.makedirs(output_dir, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=".autotiler-", dir=output_dir)
    except OSError as err:
        raise CodegenError(f"cannot create output directory '{output_dir}': {err.strerror}", where=where,
                           hint="check the -o directory and its permissions") from None
    try:
        for name, text in files.items():
            with open(os.path.join(tmp, name), "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
        return _commit(list(files), tmp, output_dir)
    except _CommitError as err:
        raise CodegenError(f"cannot write generated files into '{output_dir}' ('{err.name}': {err.strerror}); "
                           "nothing was written", where=where, hint="remove or rename what is in the way, or choose "
                           "another -o directory") from None
    except OSError as err:
        raise CodegenError(f"cannot write generated files into '{output_dir}': {err.strerror}", where=where,
                           hint="check the -o directory and its permissions") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class _CommitError(OSError):
    def __init__(self, name: str, err: OSError):
        super().__init__(err.errno, err.strerror)
        self.name = name


def _commit(names: list, tmp: str, output_dir: str) -> list:
    """Move the staged files into place, all or none (see write_files)."""
    moved = []  # (destination, the file it replaced, set aside in tmp, or None)
    try:
        for name in names:
            dest = os.path.join(output_dir, name)
            old = None
            if os.path.isfile(dest) or os.path.islink(dest):
                old = os.path.join(tmp, name + ".replaced")
                os.replace(dest, old)
            try:
                os.replace(os.path.join(tmp, name), dest)
            except OSError as err:
                if old is not None:
                    os.replace(old, dest)
                raise _CommitError(name, err) from None
            moved.append((dest, old))
    except OSError:
        for dest, old in reversed(moved):
            with contextlib.suppress(OSError):
                if old is None:
                    os.remove(dest)
                else:
                    os.replace(old, dest)
        raise
    return [dest for dest, _ in moved]


__all__ = ["MANIFEST_FORMAT", "L3Device", "L3_DEVICES", "AT_MEM_L3_DEFAULT_EXEC", "RenderKernel", "RenderGroup",
           "kernel_comment", "render_group", "l3_device", "manifest_name", "uses_l3", "render_kernel", "generate", "manifest",
           "arg_homes", "tiling_json", "write_files"]
