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


W2_VALUES = 2 * np.arange(ITEMS) - 5


def declare_residual_graph(tmp_path, l2: int, warm=None, name: str = "G") -> None:
    """The graph most graph tests run, in the current model: K1: T1 = In + W1; K2: T2 = T1 + W2;
    K3: Out = T2 + T1 (T1 read again: a residual join); W1 = 0..ITEMS-1 and W2 = W2_VALUES from
    binary files, L2 of ``l2`` bytes, optionally under AT_GRAPH_WARM_CONSTRUCT ``warm``."""
    SetUsedFilesNames(0, 1, "MatAddBasicKernels.h")
    SetGeneratedFilesNames("GraphKernels.c", "GraphKernels.h")
    SetMemorySizes(51200, l2)
    if warm is not None:
        AT_SetGraphCtrl(AT_GRAPH_WARM_CONSTRUCT, AT_OPT_VAL(warm))
    lib_add()
    for k in ("K1", "K2", "K3"):
        mat_add(k)
    w1 = write_bin(tmp_path / "w1.bin", np.arange(ITEMS))
    w2 = write_bin(tmp_path / "w2.bin", W2_VALUES)
    CreateGraph(name, CArgs(inp(), const("W1", w1), const("W2", w2), out()), CArgs(local("T1"), local("T2")))
    AddNode("K1", Bindings(GNodeArg(GNA_IN, "In", 0), GNodeArg(GNA_IN, "W1", 0), GNodeArg(GNA_OUT, "T1", 0)))
    AddNode("K2", Bindings(GNodeArg(GNA_IN, "T1", 0), GNodeArg(GNA_IN, "W2", 0), GNodeArg(GNA_OUT, "T2", 0)))
    AddNode("K3", Bindings(GNodeArg(GNA_IN, "T2", 0), GNodeArg(GNA_IN, "T1", 0), GNodeArg(GNA_OUT, "Out", 0)))
    CloseGraph()


def residual_reference(x: np.ndarray) -> np.ndarray:
    """numpy's Out of :func:`declare_residual_graph`."""
    t1 = x.ravel() + np.arange(ITEMS)
    t2 = t1 + W2_VALUES
    return (t2 + t1).astype(np.int32)
