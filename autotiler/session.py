"""The current model: settings and declarations the guide's functions act on.

A :class:`Model` holds one model script's state. The functions of :mod:`autotiler.api` act on the
*current* model; ``with Model(): ...`` makes a fresh one current for the block, so several models
can live in one process and tests stay isolated.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Optional

from .errors import ModelError
from .platforms import Platform, get_platform


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
    kernel_descr: str = "AllKernels"
    kernel_descr_args: str = "AllKernelsArgs"
    dynamic: bool = False


@dataclass
class KernelCtrl:
    buffer_promote: bool = True
    partial_buffer_promote: bool = True
    nosolution_error: bool = True
    objective: str = "time"


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
        self.libs: dict = {}            # name -> LibKernelDecl
        self.kernels: dict = {}         # name -> UserKernelDecl (declaration order)
        self.tilings: dict = {}         # name -> KernelTiling
        self.groups: dict = {}          # name -> KernelGroupDecl
        self.group_members: dict = {}   # group name -> [kernel names]
        self.open_group: Optional[str] = None
        self.open_group_where: str = ""
        self.per_kernel_objective: dict = {}
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
