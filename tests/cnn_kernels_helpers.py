"""Probe user kernels for the CNN basic kernels (tests/test_cnn_kernels.py).

Every probe is a user kernel of one model: each pointer argument is a flat buffer of a fixed
capacity, promoted whole to L1 (outputs O_IN|O_OUT so that the sentinel they are pre-filled with
comes back wherever a kernel does not write), every scalar field of the basic kernel's struct is a
run-time C argument of the user kernel (the v4s Pad as an int: the harness cannot pass a vector
type). So one build serves every size and parameter a test draws.
"""

from __future__ import annotations

import numpy as np

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.generators import CNN_HEADER, CNN_KERNELS_DIR, CNN_SOURCES, LoadCNNLibrary
from autotiler.platforms import get_platform

PLATFORM = get_platform("gap8", l1_size=512 * 1024, l2_size=4 * 1024 * 1024)
CAP = 4096                      # items per buffer
SENTINEL = {1: -99, 2: -12345, 4: -123456789}
DTYPES = {"short int": np.int16, "signed char": np.int8, "int": np.int32}


def pad_int(pad) -> int:
    """The v4s (left, right, top, bottom) as the int whose bytes it is (little endian)."""
    return int.from_bytes(bytes(int(p) & 0xFF for p in pad), "little", signed=True)


class Probe:
    """One user kernel: calls [(basic kernel, {field: source})], source = buffer name, ("imm", v)
    or the name of a scalar C argument (the field's own name by default)."""

    def __init__(self, name: str, calls: list, buffers: dict):
        # the user kernel is P_<name>: a generated function cannot take a basic kernel's name
        self.name, self.calls, self.buffers = "P_" + name, calls, buffers


PROBES: dict = {}


def probe(name: str, calls, buffers) -> None:
    PROBES[name] = Probe(name, calls, buffers)


def single(kernel: str, outputs=("Out",), buffers=None, **sources) -> None:
    """A probe calling one basic kernel, every pointer field its own buffer (named as the field),
    every scalar field a C argument of the same name."""
    PROBES[kernel] = Probe(kernel, [(kernel, sources)], dict(buffers or {}, _outputs=tuple(outputs)))


def _declare(model, p: Probe) -> None:
    cargs, bindings_calls, kerargs, scalars = [], [], {}, {}
    outputs = p.buffers.get("_outputs", ())
    for kernel, sources in p.calls:
        lib = model.libs[kernel]
        binds = []
        for f in lib.cargs:
            src = sources.get(f.name, f.name)
            if isinstance(src, tuple):
                binds.append(Imm(src[1]))
            elif f.is_pointer:
                ctype = f.ctype.replace("* __restrict__", "").replace("*", "").strip()
                kerargs.setdefault(src, ctype)
                binds.append(K_Arg(src, KER_ARG_TILE))
            else:
                scalars.setdefault(src, "int" if f.ctype == "v4s" else f.ctype)
                binds.append(C_Arg(src))
        bindings_calls.append(Call(kernel, LOC_LOOP, Bindings(len(binds), *binds)))
    for name, ctype in kerargs.items():
        if name not in p.buffers.get("_scratch", ()):
            cargs.append(TCArg(ctype + " * __restrict__", name))
    for name, ctype in scalars.items():
        cargs.append(TCArg(ctype, name))
    kas = []
    for name, ctype in kerargs.items():
        size = np.dtype(DTYPES[ctype]).itemsize
        buff = name in p.buffers.get("_scratch", ())
        flags = O_BUFF | O_NTILED if buff else (O_IN | O_OUT if name in outputs else O_IN)
        kas.append(KerArg(name, KerArgSpace(1, KER_ITER_TILE0), flags, CAP, 1, size, 0, 0, 0, "" if buff else name))
    UserKernel(p.name, KernelIterSpace(1, IterTiledSpace(KER_ITER_TILE0)), TILE_HOR,
               CArgs(len(cargs), *cargs), Calls(len(bindings_calls), *bindings_calls), KerArgs(len(kas), *kas))


def build(out_dir, cores: int = 8):
    """Generate every probe in one model and build it against the CNN library for `cores` cores."""
    with Model(PLATFORM) as m:
        SetUsedFilesNames(0, 1, CNN_HEADER)
        SetGeneratedFilesNames("CnnProbes.c", "CnnProbes.h")
        SetL1MemorySize(PLATFORM.l1_size)
        LoadCNNLibrary()
        for p in PROBES.values():
            _declare(m, p)
        files = generate(m)
    write_files(files, str(out_dir))
    return host_harness.build(out_dir, sources=CNN_SOURCES, include_dirs=[CNN_KERNELS_DIR], platform=PLATFORM,
                           cores=cores)


def run(prog, name: str, **values) -> dict:
    """Call probe `name`: arrays are copied into sentinel-filled buffers of CAP items (buffers not
    given are all sentinel), scalars passed as they are (Pad as a 4-tuple). Returns every buffer
    (flat, CAP items) after the call."""
    name = "P_" + name
    kernel = prog.kernel(name)
    args, bufs = {}, {}
    for a in kernel.args:
        if a.pointer:
            dt = np.dtype(a.dtype)
            buf = np.full(CAP, SENTINEL[dt.itemsize], dtype=dt)
            if a.name in values:
                v = np.asarray(values[a.name]).reshape(-1)
                assert v.dtype == dt, (a.name, v.dtype, dt)
                buf[:v.size] = v
            args[a.name] = bufs[a.name] = buf
        else:
            v = values[a.name]
            args[a.name] = pad_int(v) if a.name == "Pad" else int(v)
    prog.call(name, **args)
    return bufs


def check(buf: np.ndarray, expected: np.ndarray, what: str = "Out") -> None:
    """buf's first items equal expected bit for bit, the rest still holds the sentinel."""
    exp = np.asarray(expected).reshape(-1)
    got = buf[:exp.size]
    if not np.array_equal(got, exp):
        bad = np.flatnonzero(got != exp)
        raise AssertionError(f"{what}: {bad.size} of {exp.size} items differ, first at {bad[0]}: "
                             f"got {got[bad[:8]].tolist()} expected {exp[bad[:8]].tolist()}")
    tail = buf[exp.size:]
    assert (tail == SENTINEL[buf.dtype.itemsize]).all(), f"{what}: written past its {exp.size} items"
