"""Shared declarations of the graph tests: the guide's MatSumPar basic kernel, MatAdd-like user
kernels (Out = In1 + In2, W x H Word32) and a group of two of them."""

from __future__ import annotations

import numpy as np

from autotiler import *

P32 = "Word32 * __restrict__"
W, H = 8, 4
ITEMS = W * H


def lib_add():
    LibKernel("MatSumPar", CALL_PARALLEL,
              CArgs(5, TCArg(P32, "In1"), TCArg(P32, "In2"), TCArg(P32, "Out"),
                    TCArg("unsigned int", "W"), TCArg("unsigned int", "H")), "MatrixAdd_Arg_T")


def mat_add(name, w=W, h=H, ctype=P32):
    """A user kernel ``name(In1, In2, Out)``: Out = In1 + In2 (w x h Word32 items)."""
    return UserKernel(name, KernelDimensions(1, w, h, 1), KernelIterationOrder(KER_DIM2, KER_TILE), TILE_HOR,
                      CArgs(3, TCArg(ctype, "In1"), TCArg(ctype, "In2"), TCArg(ctype, "Out")),
                      Calls(1, Call("MatSumPar", LOC_INNER_LOOP, Bindings(
                          5, K_Arg("In1", KER_ARG_TILE), K_Arg("In2", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE),
                          K_Arg("In1", KER_ARG_TILE_W), K_Arg("In1", KER_ARG_TILE_H)))),
                      KerArgs(3, KerArg("In1", OBJ_IN_DB, w, h, 4, 0, 0, 0, "In1", 0),
                              KerArg("In2", OBJ_IN_DB, w, h, 4, 0, 0, 0, "In2", 0),
                              KerArg("Out", OBJ_OUT_DB, w, h, 4, 0, 0, 0, "Out", 0)))


def add_group(name="Grp"):
    """Group ``name(A, B, T, O)``: T = A + B (GA), then O = T + A (GB)."""
    OpenKernelGroup(name)
    mat_add("GA")
    mat_add("GB")
    CloseKernelGroup()
    UserKernelGroup(name, CArgs(4, TCArg(P32, "A"), TCArg(P32, "B"), TCArg(P32, "T"), TCArg(P32, "O")),
                    Calls(2, UserKernelCall("GA", LOC_GROUP, Bindings(3, C_Arg("A"), C_Arg("B"), C_Arg("T"))),
                          UserKernelCall("GB", LOC_GROUP, Bindings(3, C_Arg("T"), C_Arg("A"), C_Arg("O")))))


def write_bin(path, values, dtype="<i4") -> str:
    np.asarray(values).astype(dtype).tofile(str(path))
    return str(path)


def inp(name="In", ctype=P32):
    return TCArgInfo(ctype, name, ARG_SCOPE_ARG, ARG_DIR_IN, AT_MEM_L2, AT_MEM_UNDEF, 0)


def out(name="Out", ctype=P32):
    return TCArgInfo(ctype, name, ARG_SCOPE_ARG, ARG_DIR_OUT, AT_MEM_UNDEF, AT_MEM_L2, 0)


def local(name, ctype=P32):
    return TCArgInfo(ctype, name, ARG_SCOPE_LOCAL, ARG_DIR_INOUT, AT_MEM_UNDEF, AT_MEM_UNDEF, 0)


def const(name, path, ctype=P32, size=32, fmt=1, binary=1, fract=0):
    return TCArgInfo(ctype, name, ARG_SCOPE_GLOBAL, ARG_DIR_CONSTIN, AT_MEM_L3_HFLASH, AT_MEM_UNDEF,
                     ConstInfo(path, fmt, binary, size, fract))
