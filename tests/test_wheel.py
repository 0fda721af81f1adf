"""`pip install .` gives a working package: templates and harness C sources travel in the wheel."""

import os
import shutil
import subprocess
import sys
import textwrap
import zipfile

import pytest

from .conftest import EXAMPLES, ROOT

SCRIPT = textwrap.dedent("""
    import sys, numpy as np
    import autotiler, host_harness
    assert autotiler.__file__.startswith(sys.argv[1]), autotiler.__file__
    assert host_harness.__file__.startswith(sys.argv[1]), host_harness.__file__
    sys.path.insert(0, "matrix_add")
    import reference
    from autotiler.platforms import get_platform
    prog = host_harness.build("gen", sources=["matrix_add/MatAddBasicKernels.c"], include_dirs=["matrix_add"],
                              platform=get_platform("gap8", l2_size=1 << 20))
    args = reference.make_args(np.random.default_rng(5))
    prog.call("MatAdd", **args)
    assert np.array_equal(args["Out"], reference.expected(args)["Out"])
    print("wheel OK")
""")


@pytest.mark.slow
def test_wheel_installs_and_runs_outside_the_source_tree(tmp_path):
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(wheels)],
                   check=True, capture_output=True, text=True, timeout=600)
    wheel = next(wheels.glob("autotiler-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "autotiler/templates/kernels.c.j2" in names
    assert "host_harness/runtime/at_sim.c" in names and "host_harness/runtime/Gap.h" in names
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)],
                   check=True, capture_output=True, text=True, timeout=600)
    work = tmp_path / "work"
    shutil.copytree(EXAMPLES / "matrix_add", work / "matrix_add")
    env = dict(os.environ, PYTHONPATH=str(site), AUTOTILER_CACHE=str(tmp_path / "cache"))
    gen = subprocess.run([sys.executable, "matrix_add/model.py", "-o", "gen", "-q"], cwd=work, env=env,
                         capture_output=True, text=True, timeout=300)
    assert gen.returncode == 0, gen.stderr
    run = subprocess.run([sys.executable, "-c", SCRIPT, str(site)], cwd=work, env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0 and "wheel OK" in run.stdout, run.stderr
