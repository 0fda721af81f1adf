"""The harness checks what it is given: the manifest's element types, dtypes, shapes and
directions (user kernels and groups), each call's arrays and scalars against them, build()'s
arguments and platform, L2 capacity at generation and at run time."""

import json
import warnings
from dataclasses import replace

import numpy as np
import pytest

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.codegen.files import c_element
from autotiler.errors import AutoTilerWarning, HarnessError, PlatformError
from autotiler.platforms import DmaEngine, get_platform
from host_harness.manifest import ArgSpec, KernelSpec, MemSymbol, read_manifests
from host_harness.runner import check_args, check_platform

from .conftest import EXAMPLES, load_module

W, H = 20, 30
BIG_L2 = get_platform("gap8", l2_size=1 << 20)


def declare_model(platform=BIG_L2):
    """matrix_add's MatAdd at 20 x 30 and a group AddTwice: C = A + B; D = A + C."""
    module = load_module(EXAMPLES / "matrix_add" / "model.py", "model_matrix_add_checks")
    m = Model(platform)
    with m:
        module.ConfigureTiler(51200)
        module.LoadMatAddLibrary()
        OpenKernelGroup("AddTwice")
        module.MatAddGenerator("MatAdd", W, H)
        CloseKernelGroup()
        P = "Word32 * __restrict__"
        UserKernelGroup("AddTwice", CArgs(4, TCArg(P, "A"), TCArg(P, "B"), TCArg(P, "C"), TCArg(P, "D")),
                        Calls(2, UserKernelCall("MatAdd", LOC_GROUP, Bindings(3, C_Arg("A"), C_Arg("B"), C_Arg("C"))),
                              UserKernelCall("MatAdd", LOC_GROUP, Bindings(3, C_Arg("A"), C_Arg("C"), C_Arg("D")))))
    return m


@pytest.fixture(scope="module")
def gen(tmp_path_factory):
    out = tmp_path_factory.mktemp("checks")
    with declare_model() as m:
        write_files(generate(m), str(out))
    return out


@pytest.fixture(scope="module")
def prog(gen):
    return host_harness.build(gen, sources=[EXAMPLES / "matrix_add" / "MatAddBasicKernels.c"],
                              include_dirs=[EXAMPLES / "matrix_add"], platform=BIG_L2)


def arrays(shape=(1, H, W), dtype=np.int32):
    return {n: np.ones(shape, dtype=dtype) for n in ("In1", "In2", "Out")}


# ---------------------------------------------------------------------------------------------
# The manifest


def test_manifest_records_element_types_shapes_and_directions(gen):
    kernels = {k["name"]: k for k in json.loads((gen / "MatAddKernels.json").read_text())["kernels"]}
    args = {a["name"]: a for a in kernels["MatAdd"]["args"]}
    assert args["In1"] == {"name": "In1", "ctype": "Word32 * __restrict__", "pointer": True, "float": False,
                           "elem": "int", "dtype": "<i4", "shape": [1, H, W], "items": W * H, "direction": "in"}
    assert args["Out"]["direction"] == "out"
    group = {a["name"]: (a["shape"], a["direction"]) for a in kernels["AddTwice"]["args"]}
    assert group == {"A": ([1, H, W], "in"), "B": ([1, H, W], "in"), "C": ([1, H, W], "inout"),
                     "D": ([1, H, W], "out")}


@pytest.mark.parametrize("ctype, elem, dtype", [
    ("Word32 * __restrict__", "int", "<i4"), ("Wordu8 *", "unsigned char", "|u1"),
    ("const signed char *", "signed char", "|i1"), ("short unsigned *", "unsigned short int", "<u2"),
    ("Wordu32", "unsigned int", "<u4"), ("long long unsigned int", "unsigned long long int", "<u8"),
    ("f16 *", "_Float16", "<f2"), ("double", "double", "<f8"), ("int8_t *", "signed char", "|i1"),
    ("v2s *", "v2s", "<i2"), ("void *", "void", None), ("KerArg_T *", "KerArg_T", None), ("int **", "pointer", None),
])
def test_c_element_types(ctype, elem, dtype):
    assert c_element(ctype) == (elem, dtype)


def test_pointer_bound_to_no_kernel_argument_has_no_shape():
    """matrix_max's Out is passed to a basic kernel only: its type is known, not its extent."""
    module = load_module(EXAMPLES / "matrix_max" / "model.py", "model_matrix_max_checks")
    with Model(BIG_L2) as m:
        module.declare(W=8, H=6)
        data = json.loads(generate(m)["MatMaxKernels.json"])
    out = next(a for a in data["kernels"][0]["args"] if a["name"] == "Out")
    assert (out["elem"], out["dtype"], out["shape"], out["items"], out["direction"]) == ("int", "<i4", None, None, None)


@pytest.mark.parametrize("field, value, message", [
    ("dtype", ">i4", r"arg 'In': field 'dtype' must be a little-endian numeric numpy dtype, got '>i4'"),
    ("dtype", "O", r"field 'dtype' must be a little-endian numeric numpy dtype, got 'O'"),
    ("shape", [2, 0], r"arg 'In': field 'shape' must be a list of positive ints, got \[2, 0\]"),
    ("items", 5, r"arg 'In': field 'items' must be the item count of 'shape', got 5"),
    ("direction", "both", r"arg 'In': field 'direction' must be one of in, out, inout or null, got 'both'"),
])
def test_bad_argument_fields_in_a_manifest(tmp_path, field, value, message):
    arg = {"name": "In", "ctype": "int *", "pointer": True, "dtype": "<i4", "shape": [2, 3], "items": 6, field: value}
    manifest = {"format": "autotiler-manifest/1", "c_files": [], "header": "K.h", "kernels": [{"name": "K", "args": [arg]}]}
    (tmp_path / "K.json").write_text(json.dumps(manifest))
    with pytest.raises(HarnessError, match=message):
        read_manifests(tmp_path)


# ---------------------------------------------------------------------------------------------
# Arrays given to a call


@pytest.mark.parametrize("shape", [(1, H, W), (H, W), (H, 1, W), (H * W,)],
                         ids=["declared", "one-plane", "ones-dropped", "flat"])
def test_declared_one_plane_and_flat_shapes_are_accepted(prog, shape):
    args = arrays(shape)
    prog.call("MatAdd", **args)
    assert (args["Out"] == 2).all()


PREFIX = r"kernel 'MatAdd', argument 'In1': expects int32 \(C 'int'\) array of 600 items shaped \(1, 30, 20\), got "


@pytest.mark.parametrize("make, given, fix", [
    (lambda: np.zeros((H, W), np.float32), r"float32 shape \(30, 20\)", r"convert with arr\.astype\(np\.int32\)"),
    (lambda: np.zeros((H, W), np.int64), r"int64 shape \(30, 20\)", r"convert with arr\.astype\(np\.int32\)"),
    (lambda: np.zeros((H, W), np.uint32), r"uint32 shape \(30, 20\)", r"convert with arr\.astype\(np\.int32\)"),
    (lambda: np.zeros((H, W), ">i4"), r">i4 \(big-endian\) shape \(30, 20\)", r"convert with arr\.astype\(np\.int32\)"),
    (lambda: np.zeros((H, W + 1), np.int32), r"int32 shape \(30, 21\)",
     r"allocate it as np\.zeros\(\(1, 30, 20\), dtype=np\.int32\)"),
    (lambda: np.zeros((W, H), np.int32), r"int32 shape \(20, 30\)",
     r"reshape with arr\.reshape\(1, 30, 20\), or pass it flat with arr\.ravel\(\)"),
    (lambda: np.zeros((2, 15, W), np.int32), r"int32 shape \(2, 15, 20\)", r"reshape with arr\.reshape\(1, 30, 20\)"),
], ids=["float32", "int64", "unsigned", "big-endian", "count", "transposed", "planes"])
def test_wrong_arrays_are_refused(prog, make, given, fix):
    args = arrays()
    args["In1"] = make()
    with pytest.raises(HarnessError, match=PREFIX + given + r" \(" + fix):
        prog.call("MatAdd", **args)


def test_group_arguments_are_checked_with_the_shape_of_the_kernel_they_are_passed_to(prog):
    a, b, c, d = (np.full((H, W), v, np.int32) for v in (1, 2, 0, 0))
    prog.call("AddTwice", A=a, B=b, C=c, D=d)
    assert (c == 3).all() and (d == 4).all()
    with pytest.raises(HarnessError, match=r"kernel 'AddTwice', argument 'C': expects int32 \(C 'int'\) array of "
                                           r"600 items shaped \(1, 30, 20\), got int16 shape \(30, 20\)"):
        prog.call("AddTwice", A=a, B=b, C=c.astype(np.int16), D=d)


# ---------------------------------------------------------------------------------------------
# Scalars


def scalar_kernel(ctype):
    elem, dtype = c_element(ctype)
    unused = MemSymbol("", 0, True)
    return KernelSpec("K", (ArgSpec("N", ctype, False, False, elem=elem, dtype=dtype),), "K.h", unused, unused)


@pytest.mark.parametrize("ctype, value, message", [
    ("signed char", 300, r"expects an int in -128\.\.127 \(C 'signed char'\), got 300"),
    ("Word8", -129, r"expects an int in -128\.\.127 \(C 'signed char'\), got -129"),
    ("unsigned int", -1, r"expects an int in 0\.\.4294967295 \(C 'unsigned int'\), got -1"),
    ("int", 2 ** 40, r"expects an int in -2147483648\.\.2147483647 \(C 'int'\), got 1099511627776"),
    ("unsigned short", 65536, r"expects an int in 0\.\.65535 \(C 'unsigned short int'\), got 65536"),
])
def test_scalar_outside_its_c_type_is_refused(ctype, value, message):
    with pytest.raises(HarnessError, match=r"kernel 'K', argument 'N': " + message + r" \(pass a value of the C type's "
                                           r"range \(C would silently wrap it\)\)"):
        check_args(scalar_kernel(ctype), {"N": value})


@pytest.mark.parametrize("ctype, value, message", [
    ("f16", 70000.0, r"expects a float within \+-65504 \(C '_Float16'\), got 70000"),
    ("float", -1e39, r"expects a float within \+-3\.40282e\+38 \(C 'float'\), got -1e\+39"),
])
def test_float_scalar_outside_its_c_type_is_refused(ctype, value, message):
    """70000 passed to an f16 (binary16 tops at 65504) would become infinity on the way in."""
    elem, dtype = c_element(ctype)
    unused = MemSymbol("", 0, True)
    kernel = KernelSpec("K", (ArgSpec("N", ctype, False, True, elem=elem, dtype=dtype),), "K.h", unused, unused)
    with pytest.raises(HarnessError, match=r"kernel 'K', argument 'N': " + message + r" \(pass a value of the C type's "
                                           r"range \(C would make it infinity\)\)"):
        check_args(kernel, {"N": value})
    check_args(kernel, {"N": 65504.0})
    check_args(kernel, {"N": float("inf")})  # asked for: passed as it is


@pytest.mark.parametrize("ctype, value", [("signed char", -128), ("signed char", 127), ("unsigned int", 2 ** 32 - 1),
                                          ("int", -(2 ** 31)), ("unsigned char", np.uint8(255))])
def test_scalar_at_the_ends_of_its_range_is_accepted(ctype, value):
    check_args(scalar_kernel(ctype), {"N": value})


# ---------------------------------------------------------------------------------------------
# build() and the platform


@pytest.mark.parametrize("kw, message", [
    ({"cores": True}, r"cores must be an int from 1 to 64, got True \(bool\)"),
    ({"cores": "4"}, r"cores must be an int from 1 to 64, got '4' \(str\)"),
    ({"cores": 2.0}, r"cores must be an int from 1 to 64, got 2\.0 \(float\)"),
    ({"cores": 0}, r"0 cores: the simulator runs 1 to 64"),
    ({"cores": 65}, r"65 cores: the simulator runs 1 to 64"),
    ({"platform": "gap7"}, r"platform: unknown platform 'gap7' \(known platforms: gap8, gap9, pulp_open\)"),
    ({"platform": 8}, r"platform must be a platform name \(gap8, gap9, pulp_open\) or an autotiler\.platforms\.Platform, "
                      r"got 8 \(int\)"),
    ({"platform": get_platform("gap8", cores=65)}, r"65 cores: the simulator runs 1 to 64"),
    ({"sources": "Basic.c"}, r"sources must be a list, got the single str 'Basic\.c' \(wrap it: sources=\['Basic\.c'\]\)"),
    ({"cflags": "-O2"}, r"cflags must be a list, got the single str '-O2'"),
    ({"include_dirs": [3]}, r"include_dirs must hold strings or paths, got 3 \(int\)"),
    ({"sources": 5}, r"sources must be a list, got 5 \(int\)"),
])
def test_bad_build_arguments_are_refused_before_compiling(gen, kw, message, monkeypatch):
    import host_harness.builder as builder

    monkeypatch.setattr(builder, "_build_library", lambda *a, **k: pytest.fail("compiled"))
    with pytest.raises(HarnessError, match=message):
        host_harness.build(gen, **kw)


@pytest.mark.parametrize("kw, message", [
    ({"cores": 0}, r"platform 'gap8': cores must be an int >= 1, got 0"),
    ({"cores": True}, r"platform 'gap8': cores must be an int >= 1, got True"),
    ({"l2_size": 0}, r"platform 'gap8': l2_size must be an int >= 1, got 0"),
    ({"l1_size": 1.5}, r"platform 'gap8': l1_size must be an int >= 1, got 1\.5"),
    ({"fork_cycles": -1}, r"platform 'gap8': fork_cycles must be an int >= 0, got -1"),
    ({"ops_per_cycle_per_core": 0}, r"platform 'gap8': ops_per_cycle_per_core must be a number > 0, got 0"),
])
def test_platform_overrides_that_no_simulator_runs_are_refused(kw, message):
    with pytest.raises(PlatformError, match=message):
        get_platform("gap8", **kw)


def test_program_refuses_what_is_not_a_platform(prog):
    with pytest.raises(HarnessError, match=r"platform must be a platform name \(gap8, gap9, pulp_open\) or an "
                                           r"autotiler\.platforms\.Platform, got 'gap8' \(str\)"):
        host_harness.Program(prog.library, {k: prog.kernel(k) for k in prog.kernels}, "gap8")
    with pytest.raises(HarnessError, match=r"platform .gap8.: dma_bytes_per_cycle must be a positive number, got 0\.0 "
                                           r"\(fix the platform.s cluster_dma\)"):
        check_platform(replace(get_platform("gap8"), cluster_dma=DmaEngine(30, 0.0)))
    with pytest.raises(HarnessError, match=r"platform 'gap8' is malformed: 'NoneType' object has no attribute"):
        check_platform(replace(get_platform("gap8"), cluster_dma=None))


# ---------------------------------------------------------------------------------------------
# L2 capacity


def test_arrays_too_large_for_the_simulated_l2(gen):
    small = host_harness.build(gen, sources=[EXAMPLES / "matrix_add" / "MatAddBasicKernels.c"],
                               include_dirs=[EXAMPLES / "matrix_add"], platform=get_platform("gap8", l2_size=6000))
    with pytest.raises(HarnessError, match=r"kernel 'MatAdd', argument 'Out': 2400 bytes do not fit in L2 \(capacity "
                                           r"6000 bytes, 4800 in use\) of the simulated chip \(home the argument in "
                                           r"L3 \(an _L2DB object type, or SetKerArgInL3\), or build for a larger L2 "
                                           r"\(platform=get_platform\(\.\.\., l2_size=7200\) or more\)\)"):
        small.call("MatAdd", **arrays())


def test_generation_warns_when_l2_arguments_exceed_the_platform_l2(tmp_path):
    with declare_model(get_platform("gap8", l2_size=5000)) as m, pytest.warns(AutoTilerWarning) as record:
        m.output_dir, m.quiet = str(tmp_path), True
        GenerateTilingCode()
    messages = {str(r.message).split("kernel '")[1].split("'")[0]: str(r.message) for r in record}
    assert len(record) == 2
    assert messages["AddTwice"].endswith(
        "kernel 'AddTwice': its L2 arguments need 9600 bytes (A 2400 B, B 2400 B, C 2400 B, D 2400 B) but the L2 of "
        "platform 'gap8' is 5000 bytes: the code cannot run on that chip (home the large arguments in L3 (an _L2DB "
        "object type, or SetKerArgInL3), or generate for a platform with a larger L2 (Model(get_platform(..., "
        "l2_size=N))))")
    assert "kernel 'MatAdd': its L2 arguments need 7200 bytes (In1 2400 B, In2 2400 B, Out 2400 B)" in messages["MatAdd"]


def test_generation_that_fits_the_l2_does_not_warn(tmp_path):
    with declare_model(get_platform("gap8", l2_size=9600)) as m, warnings.catch_warnings():
        m.output_dir, m.quiet = str(tmp_path), True
        warnings.simplefilter("error")
        GenerateTilingCode()


def test_cost_negative_for_a_run_time_value_is_a_fault(tmp_path):
    """A Cost over a run-time C argument cannot be checked at generation: the simulator refuses
    it at the call instead of winding its clock back."""
    P = "Word32 * __restrict__"
    with Model(BIG_L2) as m:
        SetL1MemorySize(51200)
        SetUsedFilesNames(0, 1, "MatAddBasicKernels.h")
        LibKernel("MatSumPar", CALL_PARALLEL, CArgs(5, TCArg(P, "In1"), TCArg(P, "In2"), TCArg(P, "Out"),
                                                    TCArg("unsigned int", "W"), TCArg("unsigned int", "H")),
                  "MatrixAdd_Arg_T", Cost="W*W - 50")
        UserKernel("AddN", KernelDimensions(1, W, H, 1), KernelIterationOrder(KER_DIM2, KER_TILE), TILE_HOR,
                   CArgs(4, TCArg(P, "In1"), TCArg(P, "In2"), TCArg(P, "Out"), TCArg("unsigned int", "N")),
                   Calls(1, Call("MatSumPar", LOC_INNER_LOOP, Bindings(
                       5, K_Arg("In1", KER_ARG_TILE), K_Arg("In2", KER_ARG_TILE), K_Arg("Out", KER_ARG_TILE),
                       C_Arg("N"), K_Arg("In1", KER_ARG_TILE_H)))),
                   KerArgs(3, KerArg("In1", OBJ_IN_DB, W, H, 4, 0, 0, 0, "In1", 0),
                           KerArg("In2", OBJ_IN_DB, W, H, 4, 0, 0, 0, "In2", 0),
                           KerArg("Out", OBJ_OUT_DB, W, H, 4, 0, 0, 0, "Out", 0)))
        write_files(generate(m), str(tmp_path))
    prog = host_harness.build(tmp_path, sources=[EXAMPLES / "matrix_add" / "MatAddBasicKernels.c"],
                              include_dirs=[EXAMPLES / "matrix_add"], platform=BIG_L2)
    args = arrays()
    prog.call("AddN", N=W, **args)  # 20*20 - 50 cycles: fine
    with pytest.raises(HarnessError, match=r"AT_SIM_COMPUTE at GenKernels\.c:\d+: the basic kernel's Cost evaluates "
                       r"to -25 cycles \(a Cost counts the cycles of one call"):
        prog.call("AddN", N=5, **args)
