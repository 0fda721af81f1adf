"""Shared fixtures: golden files (refresh with ``pytest --update-golden``) and example helpers."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
GOLDEN = Path(__file__).resolve().parent / "golden"
EXAMPLE_NAMES = sorted(p.parent.name for p in EXAMPLES.glob("*/model.py"))


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/golden/ from the current output instead of comparing")


@pytest.fixture
def golden(request):
    """``golden(relative_name, text)``: compare text with tests/golden/<relative_name>."""
    update = request.config.getoption("--update-golden")

    def check(name: str, text: str) -> None:
        path = GOLDEN / name
        if update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            return
        if not path.exists():
            pytest.fail(f"golden file {path.relative_to(ROOT)} is missing: run pytest --update-golden")
        expected = path.read_text(encoding="utf-8")
        if text != expected:
            import difflib

            diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True),
                                                "golden", "generated", n=2))
            pytest.fail(f"{name} differs from its golden file (pytest --update-golden to accept):\n{diff[:4000]}")

    return check


def load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def bench_script(name: str):
    """``bench/<name>.py`` as a module (the scripts are not a package), loaded once: registered as
    ``bench_<name>`` before it runs, as its dataclasses need."""
    key = f"bench_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, ROOT / "bench" / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]


def example_reference(name: str):
    return load_module(EXAMPLES / name / "reference.py", f"reference_{name}")


def run_model(name: str, out_dir: Path, *args: str) -> subprocess.CompletedProcess:
    """Run an example's model script as a user would: ``python examples/<name>/model.py -o DIR``."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [sys.executable, str(EXAMPLES / name / "model.py"), "-o", str(out_dir), "-q", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture(scope="session")
def generated_examples(tmp_path_factory):
    """Each example generated once per session: name -> output directory."""
    out = {}
    for name in EXAMPLE_NAMES:
        d = tmp_path_factory.mktemp(f"gen_{name}")
        proc = run_model(name, d)
        assert proc.returncode == 0, f"{name}: model script failed:\n{proc.stderr}"
        out[name] = d
    return out


@pytest.fixture(scope="module")
def private_harness_cache(tmp_path_factory):
    """A module's builds go to a cache of their own (``AUTOTILER_CACHE``): its tests neither
    depend on nor pollute ~/.cache."""
    cache = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AUTOTILER_CACHE", str(cache))
        yield cache
