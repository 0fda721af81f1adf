"""Regressions found trying the project as a new user of the original would (issue 22): the
guide's and the SDK's own patterns that once failed to compile, were accepted when they should
not be, or were reported in an unhelpful form."""

import subprocess

import numpy as np

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.model.ir import CArg
from autotiler.platforms import get_platform

from .conftest import ROOT

RUNTIME = ROOT / "host_harness" / "runtime"
STRICT = ["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror"]

# A basic kernel written as the SDK's 2019 MatMult kernels are: <stdint.h> types, no include of
# its own for them (the original's Gap8.h brought them in).
STDINT_H = """#ifndef STDINT_KERNELS_H
#define STDINT_KERNELS_H
#include "Gap.h"
typedef struct { int16_t * __restrict__ In; int16_t * __restrict__ Out; uint32_t N; } KerNeg16_ArgT;
void KerNeg16(KerNeg16_ArgT *Arg);
#endif
"""
STDINT_C = """#include "StdintKernels.h"
void KerNeg16(KerNeg16_ArgT *Arg) {
    uint32_t Chunk = (Arg->N + gap_ncore() - 1) / gap_ncore(), First = gap_coreid() * Chunk;
    uint32_t Last = First + Chunk < Arg->N ? First + Chunk : Arg->N;
    for (uint32_t i = First; i < Last; i++) Arg->Out[i] = (int16_t) -Arg->In[i];
}
"""


def _stdint_model():
    """One user kernel whose arguments are declared the 2019 MatMult generator's way."""
    SetUsedFilesNames(0, 1, "StdintKernels.h")
    SetGeneratedFilesNames("StdintGen.c", "StdintGen.h")
    SetL1MemorySize(256)
    i16 = "int16_t * __restrict__"
    LibKernel("KerNeg16", CALL_PARALLEL, CArgs(TCArg(i16, "In"), TCArg(i16, "Out"), TCArg("uint32_t", "N")),
              "KerNeg16_ArgT", Cost="N")
    return UserKernel("Neg", KernelIterSpace(1, IterTiledSpace(KER_ITER_TILE0)), TILE_HOR,
                      CArgs(TCArg(i16, "In"), TCArg(i16, "Out")),
                      Calls(Call("KerNeg16", LOC_LOOP, Bindings(K_Arg("In", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE),
                                                                K_Arg("In", KER_ARG_TILE_H)))),
                      KerArgs(KerArg("In", KerArgSpace(1, KER_ITER_TILE0), OBJ_IN_DB, 1, 300, 2, 0, 0, 0, "In"),
                              KerArg("Out", KerArgSpace(1, KER_ITER_TILE0), OBJ_OUT_DB, 1, 300, 2, 0, 0, 0, "Out")))


def test_stdint_argument_types_compile_and_run(tmp_path):
    """TCArg("int16_t * __restrict__", ...) as the SDK's MatMult generator writes it: the
    generated header compiles on its own (it once failed with "unknown type name 'int16_t'") and
    the kernel runs bit-exactly."""
    (tmp_path / "StdintKernels.h").write_text(STDINT_H)
    (tmp_path / "StdintKernels.c").write_text(STDINT_C)
    gen = tmp_path / "gen"
    with Model() as m:
        t = _stdint_model()
        write_files(generate(m), str(gen))
    assert t.ntiles > 1
    subprocess.run([*STRICT, f"-I{RUNTIME}", f"-I{tmp_path}", "-x", "c", "-fsyntax-only",
                    str(gen / "StdintGen.h")], check=True)
    prog = host_harness.build(gen, sources=[tmp_path / "StdintKernels.c"], include_dirs=[tmp_path],
                              platform=get_platform("gap8"))
    x = np.arange(-150, 150, dtype=np.int16)
    out = np.full_like(x, 0x5A5A)
    prog.call("Neg", In=x, Out=out)
    np.testing.assert_array_equal(out, -x)


def test_a_float16_scalar_is_passed_as_a_float():
    """A scalar C argument spelled '_Float16' (gcc's name of the chip's f16) is a float: the
    harness passes it through the float registers, as it does for 'f16'."""
    assert CArg("_Float16", "Scale").is_float and CArg("f16", "Scale").is_float
    assert not CArg("_Float16 *", "In").is_float
