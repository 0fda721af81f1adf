"""Probe user kernels for the SQ8 basic kernels: one user kernel per basic kernel, every pointer
field a buffer of its capacity promoted whole to L1 and every scalar field a run-time C argument,
so one build serves every hypothesis draw (as tests/cnn_kernels_helpers.py does for the 16-bit
library). Outputs are pre-filled with a sentinel that must survive past the written items.

A field is ``(C type, name, capacity in items)``; capacity 0 makes it a scalar argument.
"""

from __future__ import annotations

import numpy as np

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.generators import CNN_KERNELS_DIR
from autotiler.platforms import get_platform

PLATFORM = get_platform("gap8", l1_size=512 * 1024, l2_size=4 * 1024 * 1024)
SENTINEL = -99
P = " * __restrict__"
OUTPUTS = ("Out",)
ITEM_SIZE = {"signed char": 1, "unsigned char": 1, "short int": 2, "int": 4}
DTYPES = {"signed char": np.int8, "unsigned char": np.uint8, "short int": np.int16, "int": np.int32}


def _base(ctype: str) -> str:
    return ctype.replace(P, "")


def declare_probe(kernel: str, struct: str, fields: list) -> None:
    """The struct, the basic kernel and its probe P_<kernel> (outputs O_IN|O_OUT, so the sentinel
    comes back where the kernel does not write)."""
    LibKernelTemplate(struct, CArgs(len(fields), *[TCArg(t, n) for t, n, _ in fields]))
    LibKernel(kernel, CALL_PARALLEL, 0, struct)
    binds, kas = [], []
    for ctype, name, cap in fields:
        if cap:
            binds.append(K_Arg(name, KER_ARG_TILE))
            flags = O_IN | O_OUT if name in OUTPUTS else O_IN
            kas.append(KerArg(name, KerArgSpace(1, KER_ITER_TILE0), flags, cap, 1, ITEM_SIZE[_base(ctype)], 0, 0, 0,
                              name))
        else:
            binds.append(C_Arg(name))
    cargs = [TCArg(t, n) for t, n, _ in fields]
    UserKernel("P_" + kernel, KernelIterSpace(1, IterTiledSpace(KER_ITER_TILE0)), TILE_HOR,
               CArgs(len(cargs), *cargs), Calls(1, Call(kernel, LOC_LOOP, Bindings(len(binds), *binds))),
               KerArgs(len(kas), *kas))


def build_probes(out_dir, probes: list, sources: list, cores: int, header: str = "CNN_SQ8_BasicKernels.h"):
    """Build the probes ``[(kernel, struct, fields), ...]`` for ``cores`` cores."""
    with Model(PLATFORM) as model:
        SetUsedFilesNames(0, 1, header)
        SetGeneratedFilesNames("Sq8Probes.c", "Sq8Probes.h")
        SetL1MemorySize(PLATFORM.l1_size)
        for kernel, struct, fields in probes:
            declare_probe(kernel, struct, fields)
        files = generate(model)
    write_files(files, str(out_dir))
    return host_harness.build(out_dir, sources=sources, include_dirs=[CNN_KERNELS_DIR], platform=PLATFORM,
                              cores=cores)


def run(prog, kernel: str, fields: list, **values) -> dict:
    """Call probe P_<kernel>: each array is copied into a sentinel-filled buffer of its field's
    capacity, scalars are passed as they are. Returns every buffer after the call."""
    args, bufs = {}, {}
    for ctype, name, cap in fields:
        if not cap:
            args[name] = int(values[name])
            continue
        dtype = DTYPES[_base(ctype)]
        buf = np.full(cap, SENTINEL, dtype=dtype)
        if name in values:
            v = np.asarray(values[name]).astype(dtype).reshape(-1)
            buf[:v.size] = v
        args[name] = bufs[name] = buf
    prog.call("P_" + kernel, **args)
    return bufs


def check(buf: np.ndarray, expected: np.ndarray) -> None:
    """buf's first items equal expected bit for bit, the rest still holds the sentinel."""
    exp = np.asarray(expected).reshape(-1)
    got = buf[:exp.size]
    bad = np.flatnonzero(got != exp)
    assert bad.size == 0, (f"{bad.size} of {exp.size} outputs differ, first at {bad[:1].tolist()}: "
                           f"got {got[bad[:8]].tolist()} expected {exp[bad[:8]].tolist()}")
    assert (buf[exp.size:] == SENTINEL).all(), f"written past its {exp.size} outputs"
