"""The current model: settings and declarations the guide's functions act on.

A :class:`Model` holds one model script's state. The functions of :mod:`autotiler.api` act on the
*current* model; ``with Model(): ...`` makes a fresh one current for the block, so several models
can live in one process and tests stay isolated.
"""

from __future__ import annotations

import gc
import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Optional

from ..constants import InlineModeT
from ..errors import ModelError
from ..platforms import Platform, get_platform
from .ir import KernelOptions


@dataclass
class FileNames:
    std_types: str = "KernelLibStdTypes.h"
    lib_headers: tuple = ()
    init_c: Optional[str] = None
    init_h: Optional[str] = None
    kernels_c: str = "GenKernels.c"
    kernels_h: str = "GenKernels.h"


@dataclass
class SymbolNames:
    l1: str = "L1_Memory"
    l2: str = "L2_Memory"
    l3: str = "L3_Memory"
    kernel_descr: str = "AllKernels"
    kernel_descr_args: str = "AllKernelsArgs"
    dynamic: bool = False
    old_style_names: bool = False  # InitKernelIterInfos(1): D0/D1 loops named InPlane/OutPlane
    named_at: str = ""             # the call that named the L1/L2 symbols: "SetSymbolNames at model.py:12"


@dataclass
class KernelCtrl:
    """Controls applied to the user kernels declared from now on."""

    buffer_promote: bool = True
    partial_buffer_promote: bool = True
    nosolution_error: bool = True
    keep_group: bool = True
    objective: str = "time"
    inline: InlineModeT = InlineModeT.ALWAYS_INLINE

    def options(self, objective: Optional[str] = None) -> KernelOptions:
        return KernelOptions(self.buffer_promote, self.partial_buffer_promote, self.nosolution_error,
                             objective or self.objective, int(self.inline))


class Model:
    """One model: basic kernels, user kernels, groups and generation settings."""

    def __init__(self, platform: str | Platform = "gap8"):
        self.platform = get_platform(platform)
        self.files = FileNames()
        self.symbols = SymbolNames()
        self.ctrl = KernelCtrl()
        self.graph_ctrl: dict = {}
        self.l1_size: int = self.platform.l1_size
        self.l1_size_from_cli: Optional[int] = None
        self.l2_size: int = self.platform.l2_size
        self.l2_size_from_cli: Optional[int] = None
        self.l3_size: int = self.platform.l3_ram_size
        self.output_dir: str = "."
        self.const_dir: Optional[str] = None
        self.const_dir_from_cli: Optional[str] = None  # -c DIR wins over SetConstDir
        self.quiet: bool = False
        self.reentrant: bool = False  # -R: graphs get the reentrant runner (AT_GRAPH_RUNNER_RE_ENTRANT)
        self.libs: dict = {}            # name -> LibKernelDecl
        self.templates: dict = {}       # LibKernelTemplate name -> CArgs
        self.kernels: dict = {}         # name -> UserKernelDecl (declaration order)
        self.tilings: dict = {}         # name -> the tiler's KernelTiling
        self.unsolved: dict = {}        # name -> TilingError of a declaration with NOSOLUTION_ERROR off
        self.groups: dict = {}          # name -> KernelGroupDecl
        self.group_members: dict = {}   # group name -> [kernel names]
        self.group_where: dict = {}     # group name -> file:line of its OpenKernelGroup
        self.keep_group: dict = {}      # group name -> KER_OPT_KEEP_GROUP when it was closed
        self.open_group: Optional[str] = None
        self.open_group_where: str = ""
        self.per_kernel_objective: dict = {}
        self.per_kernel_objective_where: dict = {}  # kernel name -> where SetTilingObjective named it
        self.kernel_infos: dict = {}    # kernel -> {info name: (number, value)}
        self.kernel_origins: dict = {}  # kernel -> (generator, args after Name) of the SQ8 TFLM call that made it
        self.fusions: dict = {}         # graph -> the fused layers CNN_FuseGraph_SQ8 chose (reports)
        self.arg_dims: dict = {}        # (kernel, arg) -> (dims outer to inner incl. item size, float?)
        self.memory_devices: dict = {}  # AT_MemLocation_T -> (size, base name, const file, ext managed)
        self.used_objects: set = set()  # ids of KerArg objects already part of a user kernel
        self.graphs: dict = {}          # name -> GraphDecl (closed graphs, declaration order)
        self.open_graph = None          # the graph.OpenGraph between CreateGraph and CloseGraph
        self._previous: list = []

    # -- current-model stack -------------------------------------------------------------------
    def __enter__(self) -> Model:
        self._previous.append(_state.current)
        _state.current = self
        return self

    def __exit__(self, *exc) -> None:
        _state.current = self._previous.pop()

    # -- queries ---------------------------------------------------------------------------------
    @property
    def l1_budget(self) -> int:
        return self.l1_size_from_cli if self.l1_size_from_cli is not None else self.l1_size

    @property
    def l2_budget(self) -> int:
        """Bytes of the L2 symbol (staging of L3 arguments); --L2 wins over SetMemorySizes."""
        return self.l2_size_from_cli if self.l2_size_from_cli is not None else self.l2_size

    def output_path(self, name: str) -> str:
        return os.path.join(self.output_dir, name)

    def check_new_function_name(self, name: str, where: str) -> None:
        if name in self.kernels or name in self.groups:
            raise ModelError(f"a user kernel or group named '{name}' is already declared", where=where,
                             kernel=name, hint="user kernel and group names must be unique")
        if name in self.libs:
            raise ModelError(f"'{name}' is already the name of a basic kernel", where=where, kernel=name,
                             hint="generated functions cannot reuse a basic kernel's name")

    def drop_kernel(self, name: str) -> None:
        """Remove a user kernel (PopUserKernel and friends)."""
        uk = self.kernels.pop(name)
        self.tilings.pop(name, None)
        if uk.group and name in self.group_members.get(uk.group, []):
            self.group_members[uk.group].remove(name)


@dataclass
class _State:
    current: Optional[Model] = None
    default: Optional[Model] = field(default=None)


_state = _State()


def current_model() -> Model:
    """The model the guide's functions act on (a default one is created on first use)."""
    if _state.current is None:
        _state.default = Model()
        _state.current = _state.default
    return _state.current


def reset_default_model() -> Model:
    """Start a fresh default model (used by the CLI between model scripts)."""
    _state.default = Model()
    _state.current = _state.default
    return _state.current


__all__ = ["FileNames", "SymbolNames", "KernelCtrl", "Model", "current_model", "reset_default_model"]


@contextmanager
def paused_gc():
    """The cyclic garbage collector off for one bounded step of building a model (an API call,
    a kernel's search, the generation of the files): such a step makes many objects and keeps
    most (memos, estimates, schedules, declarations), and each collection would walk all the
    model's objects again, a fifth of a MobileNet generation's time. What the step drops is
    freed by reference counting, a cycle at the first collection after it. Nested, or with the
    collector already off, it leaves the state as it found it."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
