"""Generation is atomic as a set: killed (SIGKILL) at any moment, the output directory holds the
previous set or the new one once recovered (by the harness reading it, or by the next
generation); the manifest's hashes make a mixed set detectable, and the harness refuses one."""

import builtins
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

import host_harness
from autotiler import Model
from autotiler.codegen import files as codegen_files
from autotiler.codegen import generate, write_files
from autotiler.errors import CodegenError, HarnessError
from autotiler.platforms import get_platform
from host_harness.manifest import read_manifests

from .conftest import EXAMPLES, ROOT, load_module

PLATFORM = get_platform("gap8", l2_size=1 << 20)
NAMES = ["MatAddKernels.c", "MatAddKernels.h", "MatAddKernels.json"]


def matadd_files(w: int, h: int = 30) -> dict:
    module = load_module(EXAMPLES / "matrix_add" / "model.py", "model_matrix_add_atomic")
    with Model(PLATFORM) as m:
        module.declare(W=w, H=h)
        return generate(m)


@pytest.fixture(scope="module")
def sets():
    """Two generations of the same files (MatAdd at two widths)."""
    old, new = matadd_files(20), matadd_files(24)
    assert sorted(old) == sorted(new) == NAMES and all(old[n] != new[n] for n in NAMES)
    return old, new


def build(gen: Path):
    return host_harness.build(gen, sources=[EXAMPLES / "matrix_add" / "MatAddBasicKernels.c"],
                              include_dirs=[EXAMPLES / "matrix_add"], platform=PLATFORM)


def visible(gen: Path) -> dict:
    return {p.name: p.read_text() for p in gen.iterdir() if not p.name.startswith(".")}


def hidden(gen: Path) -> list:
    return sorted(p.name for p in gen.iterdir() if p.name.startswith("."))


def test_manifest_hashes_every_file_of_its_set(sets):
    old, _ = sets
    data = json.loads(old["MatAddKernels.json"])
    assert sorted(data["set"]["files"]) == ["MatAddKernels.c", "MatAddKernels.h"]
    assert data["set"] == json.loads(matadd_files(20)["MatAddKernels.json"])["set"]  # deterministic id
    assert data["set"]["id"] != json.loads(sets[1]["MatAddKernels.json"])["set"]["id"]


# ---------------------------------------------------------------------------------------------
# Killed at every file operation


def _killed_write(files: dict, out: Path, kill_at: int) -> bool:
    """write_files in a forked child that SIGKILLs itself just before its kill_at-th file
    operation (open for writing, mkdir, rename, replace, unlink, rmdir, ...); True if it died."""
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            count = [0]

            def hooked(func):
                def call(*args, **kwargs):
                    count[0] += 1
                    if count[0] == kill_at:
                        os.kill(os.getpid(), signal.SIGKILL)
                    return func(*args, **kwargs)
                return call

            for name in ("replace", "rename", "remove", "unlink", "mkdir", "rmdir"):
                setattr(os, name, hooked(getattr(os, name)))
            tempfile.mkdtemp = hooked(tempfile.mkdtemp)
            real_open = builtins.open
            builtins.open = lambda f, mode="r", *a, **k: (hooked(real_open) if "w" in mode else real_open)(f, mode, *a, **k)
            write_files(files, str(out))
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) or os.WEXITSTATUS(status) == 0
    return os.WIFSIGNALED(status)


def test_killed_at_every_file_operation_leaves_the_old_or_the_new_set(sets, tmp_path):
    old, new = sets
    template = tmp_path / "template"
    write_files(old, str(template))
    (template / ".autotiler-stage-left-by-a-killed-run").mkdir()  # removed by the next generation
    seen, mixed, kill_at = set(), 0, 0
    while True:
        kill_at += 1
        out, again = tmp_path / f"k{kill_at}", tmp_path / f"k{kill_at}-again"
        shutil.copytree(template, out)
        if not _killed_write(new, out, kill_at):
            assert visible(out) == new and hidden(out) == []
            break
        mixed += visible(out) not in (old, new)
        shutil.copytree(out, again, symlinks=True)
        # the harness finishes or undoes the interrupted generation, and accepts the result
        read_manifests(out)
        state = visible(out)
        assert state in (old, new), f"killed before operation {kill_at}: {sorted(state)}"
        assert ".autotiler-commit" not in hidden(out) and ".autotiler-rollback" not in hidden(out)
        seen.add("new" if state == new else "old")
        if kill_at % 4 == 1:
            build(out)
        # or the next generation does, and leaves nothing behind
        write_files(old, str(again))
        assert visible(again) == old and hidden(again) == []
    assert kill_at > 20 and mixed > 0 and seen == {"old", "new"}


CHILD = """
import json, os, sys, time
from autotiler.codegen.files import write_files
files = json.loads(open(sys.argv[1]).read())
real = os.replace
def slow(src, dst):
    time.sleep(0.04)
    return real(src, dst)
os.replace = slow
print("ready", flush=True)
write_files(files, sys.argv[2])
"""


def test_generation_killed_from_outside_at_random_moments(sets, tmp_path):
    old, new = sets
    (tmp_path / "new.json").write_text(json.dumps(new))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    rng = random.Random(7)
    for run in range(3):
        out = tmp_path / f"run{run}"
        write_files(old, str(out))
        proc = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path / "new.json"), str(out)],
                                stdout=subprocess.PIPE, env=env, text=True)
        assert proc.stdout.readline().strip() == "ready"
        try:
            proc.wait(timeout=rng.uniform(0.0, 0.3))
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        proc.stdout.close()
        build(out)
        assert visible(out) in (old, new)


# ---------------------------------------------------------------------------------------------
# Mixed sets are refused


def test_files_of_another_generation_are_refused(sets, tmp_path):
    old, new = sets
    write_files(old, str(tmp_path))
    (tmp_path / "MatAddKernels.h").write_text(new["MatAddKernels.h"])
    ident = json.loads(old["MatAddKernels.json"])["set"]["id"][:12]
    with pytest.raises(HarnessError, match=rf"manifest MatAddKernels\.json describes generation {ident} but "
                                           r"MatAddKernels\.h \(changed\) is not of it: the directory mixes "
                                           r"generations \(an interrupted or concurrent generation, files copied in "
                                           r"or edited by hand\) \(regenerate: run the model script again with -o "):
        build(tmp_path)
    (tmp_path / "MatAddKernels.c").unlink()
    with pytest.raises(HarnessError, match=r"but MatAddKernels\.c \(missing\), MatAddKernels\.h \(changed\) are not "
                                           r"of it"):
        read_manifests(tmp_path)
    write_files(new, str(tmp_path))  # regenerating fixes it
    build(tmp_path)


def test_hand_edits_build_on_request_and_are_named(sets, tmp_path, capfd):
    """A printf added to a generated .c (the original's users' daily habit) is refused by default,
    with the opt-in in the hint; build(..., allow_edits=True) builds it, says which file differs
    from the generation, and runs the edit. A missing file is refused even then."""
    old, _ = sets
    write_files(old, str(tmp_path))
    kernels_c = tmp_path / "MatAddKernels.c"
    text = kernels_c.read_text()
    head, sep, body = text.partition("\nvoid MatAdd(")
    brace = body.index("{\n") + 2
    kernels_c.write_text(head + sep + body[:brace] + '\tfprintf(stderr, "MatAdd: edited by hand\\n");\n'
                         + body[brace:])
    with pytest.raises(HarnessError, match=r"MatAddKernels\.c \(changed\) is not of it: .* \(regenerate: run the "
                                           r"model script again with -o .* \(or, to build files you edited on purpose: "
                                           r"build\(\.\.\., allow_edits=True\), autotiler build --allow-edits\)\)"):
        build(tmp_path)
    capfd.readouterr()
    prog = host_harness.build(tmp_path, sources=[EXAMPLES / "matrix_add" / "MatAddBasicKernels.c"],
                              include_dirs=[EXAMPLES / "matrix_add"], platform=PLATFORM, allow_edits=True)
    assert capfd.readouterr().err == (f"autotiler: warning: {tmp_path}: building MatAddKernels.c as edited by hand, "
                                      "not as generated (regenerate to undo the edits)\n")
    a = np.arange(600, dtype=np.int32).reshape(30, 20)
    out = np.zeros_like(a)
    prog.call("MatAdd", In1=a, In2=a, Out=out)
    np.testing.assert_array_equal(out, 2 * a)
    assert "MatAdd: edited by hand" in capfd.readouterr().err
    (tmp_path / "MatAddKernels.h").unlink()
    with pytest.raises(HarnessError, match=r"but MatAddKernels\.h \(missing\) is not of it"):
        read_manifests(tmp_path, allow_edits=True)


def test_a_set_entry_that_is_not_a_plain_file_name_is_refused(sets, tmp_path):
    old, _ = sets
    data = json.loads(old["MatAddKernels.json"])
    data["set"]["files"]["../x.c"] = "0" * 64
    write_files({**old, "MatAddKernels.json": json.dumps(data)}, str(tmp_path))
    with pytest.raises(HarnessError, match=r"manifest MatAddKernels\.json set: file '\.\./x\.c' must map a plain file "
                                           r"name to a sha256"):
        read_manifests(tmp_path)


def test_a_journal_that_can_be_neither_finished_nor_undone(sets, tmp_path):
    old, _ = sets
    write_files(old, str(tmp_path))
    journal = tmp_path / ".autotiler-rollback"
    for sub in ("new", "old", "absent"):
        (journal / sub).mkdir(parents=True)
    (journal / "order").write_text(json.dumps(["Stuck.h"]))
    (journal / "old" / "Stuck.h").write_text("previous\n")
    (tmp_path / "Stuck.h").mkdir()
    (tmp_path / "Stuck.h" / "x").write_text("in the way\n")  # a file cannot replace a non-empty directory
    with pytest.raises(HarnessError, match=r"a generation was interrupted and could not be finished or undone \(.*"
                                           r"\.autotiler-rollback: a replaced file could not be put back\) \(check .*"
                                           r"\.autotiler-rollback \(old/: the previous files\), then regenerate\)"):
        build(tmp_path)
    with pytest.raises(CodegenError, match=r"cannot write generated files into '.*': an interrupted generation could "
                                           r"not be finished or undone \(.*\(old/: the previous ones\), put back what "
                                           r"you want and remove it\)"):
        write_files(old, str(tmp_path))
    shutil.rmtree(tmp_path / "Stuck.h")
    write_files(old, str(tmp_path))  # now it can be undone: Stuck.h is put back
    assert (tmp_path / "Stuck.h").read_text() == "previous\n" and hidden(tmp_path) == []


def test_a_directory_in_use_is_waited_for(sets, tmp_path, monkeypatch):
    old, _ = sets
    write_files(old, str(tmp_path))
    monkeypatch.setattr(codegen_files, "LOCK_TIMEOUT", 0.1)
    with codegen_files.output_lock(str(tmp_path), exclusive=False):  # a build in progress
        read_manifests(tmp_path)  # readers share the directory
        with pytest.raises(CodegenError, match=r"cannot write generated files: '.*' is locked by another generation "
                                               r"or build \(waited 0\.1 s\) \(wait for it to finish, or choose another "
                                               r"-o directory\)"):
            write_files(old, str(tmp_path))
    with codegen_files.output_lock(str(tmp_path), exclusive=True):  # a generation in progress
        with pytest.raises(HarnessError, match=r"is locked by another generation or build \(waited 0\.1 s\) \(wait "
                                               r"for the generation to finish\)"):
            read_manifests(tmp_path)
    assert visible(tmp_path) == old
