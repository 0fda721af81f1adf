"""Every example of the guide: generate, build with its basic kernels, run on the simulated chip,
compare bit-exactly with numpy (outputs pre-filled with a sentinel), also under sanitizers."""

import numpy as np
import pytest

import host_harness
from autotiler.platforms import get_platform

from .conftest import EXAMPLE_NAMES, EXAMPLES, example_reference

# The guide's MatAdd (3 x 200x300 int) needs 720 KB of L2; GAP8 has 512 KB. The examples run on a
# GAP8 whose L2 is raised so that the guide's sizes can be used unchanged.
PLATFORM = get_platform("gap8", l2_size=2 * 1024 * 1024)


def build_example(name, gen_dir, sanitize=False):
    ref = example_reference(name)
    # an example using a library's basic kernels (the CNN generators') names its headers' directory
    return host_harness.build(gen_dir, sources=[EXAMPLES / name / s for s in ref.SOURCES],
                              include_dirs=[EXAMPLES / name, *getattr(ref, "INCLUDE_DIRS", ())], platform=PLATFORM,
                              sanitize=sanitize), ref


def run_and_check(program, ref, seed):
    args = ref.make_args(np.random.default_rng(seed))
    expected = ref.expected(args)
    counters = program.call(ref.KERNEL, **args)
    for out_name, value in expected.items():
        np.testing.assert_array_equal(args[out_name], value, err_msg=f"{ref.KERNEL}: output {out_name}")
    return counters


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_bit_exact(name, generated_examples):
    program, ref = build_example(name, generated_examples[name])
    for seed in (1, 2):
        counters = run_and_check(program, ref, seed)
    assert counters["peak_l1"] <= PLATFORM.l1_size
    assert counters["cycles"] > 0 and counters["transfers"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_bit_exact_under_sanitizers(name, generated_examples):
    program, ref = build_example(name, generated_examples[name], sanitize=True)
    run_and_check(program, ref, 3)


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_counters_match_the_tiling_report(name, generated_examples):
    import json

    program, ref = build_example(name, generated_examples[name])
    manifest = json.loads(next(generated_examples[name].glob("*.json")).read_text())
    args = ref.make_args(np.random.default_rng(0))
    counters = program.call(ref.KERNEL, **args)
    # the tilings of the kernel called: a user kernel's own, or those of every call of a group
    called = next(k for k in manifest["kernels"] if k["name"] == ref.KERNEL)
    names = called["calls"] * called["iterations"] if called["kind"] == "group" else [ref.KERNEL]
    tilings = [manifest["tilings"][n] for n in names]
    assert counters["l2_to_l1"] == sum(t["traffic_in"] for t in tilings)
    assert counters["l1_to_l2"] == sum(t["traffic_out"] for t in tilings)
    assert counters["l3_to_l2"] == sum(t["traffic_l3_in"] for t in tilings)
    assert counters["l2_to_l3"] == sum(t["traffic_l3_out"] for t in tilings)
    assert counters["peak_l1"] == manifest["l1"]["size"] <= max(t["budget"] for t in tilings)


def test_static_renamed_symbols_and_four_file_form(tmp_path):
    """SetSymbolNames + array (non-dynamic) L1 symbol + the guide's 4-name SetGeneratedFilesNames."""
    from autotiler import Model, SetGeneratedFilesNames, SetSymbolNames
    from autotiler.codegen import generate, write_files

    from .conftest import load_module

    module = load_module(EXAMPLES / "matrix_add" / "model.py", "model_matrix_add_static")
    with Model() as m:
        module.declare()
        SetSymbolNames("MatAdd_L1_Memory", "MatAdd_L2_Memory")
        SetGeneratedFilesNames("MatAddInit.c", "MatAddInit.h", "MatAddKernels.c", "MatAddKernels.h")
        m.symbols.dynamic = False
        files = generate(m)
    assert "L1_CL_MEM char MatAdd_L1_Memory[_MatAdd_L1_Memory_SIZE]" in files["MatAddInit.c"]
    assert "MatAdd_L1_Memory + 12800" in files["MatAddKernels.c"]
    write_files(files, str(tmp_path))
    program, ref = build_example("matrix_add", tmp_path)
    counters = run_and_check(program, ref, 7)
    assert counters["peak_l1"] == 38400  # the static L1 array counts as L1 in use
