"""Generator options (``TilerParseOptions``: ``-o``, ``-c``, ``--L1/L2/L3``, ``--objective``,
``--platform``, ``-q``, ``-R``) and one-line errors. Library code only raises typed errors;
this module (for model scripts) and :mod:`autotiler.command` (the ``autotiler`` command) turn an
:class:`~autotiler.errors.AutoTilerError` into a one-line message (``autotiler: error: ...``)
and a non-zero exit status."""

from __future__ import annotations

import argparse
import os
import sys

from .constants import AT_GraphCtrl_T
from .errors import AutoTilerError, OptionsError, PlatformError
from .objectives import OBJECTIVES
from .platforms import get_platform

USAGE = "MODEL [-o DIR] [--L1 BYTES] [--objective NAME] [--platform NAME] [-q]"


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse would print usage and exit(2); we want a typed error
        raise OptionsError(message, hint=f"usage: {self.prog} {USAGE.split(' ', 1)[1]}")


def _parser(prog: str) -> _Parser:
    p = _Parser(prog=prog, add_help=False, description="Generate tiled C code for an autotiler model.")
    p.add_argument("-o", dest="output_dir", default=None, help="directory for the generated files")
    p.add_argument("-c", dest="const_dir", default=None, help="directory for constant files (graphs)")
    p.add_argument("--L1", dest="l1", type=positive_int, default=None, help="L1 budget in bytes")
    p.add_argument("--L2", dest="l2", type=positive_int, default=None, help="L2 budget in bytes")
    p.add_argument("--L3", dest="l3", type=positive_int, default=None, help="L3 budget in bytes")
    p.add_argument("--objective", default=None, help="tiling objective (see autotiler.objectives.OBJECTIVES)")
    p.add_argument("--platform", default=None, help="platform name (gap8, gap9, pulp_open)")
    p.add_argument("-q", dest="quiet", action="store_true", help="do not print the tiling report")
    p.add_argument("-R", dest="reentrant", action="store_true",
                   help="reentrant (preemptible) graph runner: a context and a runner yielding after each layer")
    p.add_argument("-h", "--help", action="store_true", help="show this help and exit")
    return p


def positive_int(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number of bytes") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"'{text}' must be positive")
    return value


def parse_generator_options(args: list, model) -> None:
    """Apply TilerParseOptions' arguments (program name already removed) to ``model``."""
    ns = _parser(os.path.basename(sys.argv[0] or "model.py")).parse_args(args)
    if ns.help:
        _parser(os.path.basename(sys.argv[0] or "model.py")).print_help()
        raise SystemExit(0)
    if ns.reentrant:
        # the guide's reentrant graph executor, as AT_GRAPH_RUNNER_RE_ENTRANT (graphs closed after this call)
        model.reentrant = True
        model.graph_ctrl[AT_GraphCtrl_T.AT_GRAPH_RUNNER_RE_ENTRANT] = True
    if ns.platform:
        try:
            model.platform = get_platform(ns.platform)
        except PlatformError as err:  # a bad option like any other: one line, status 1
            raise OptionsError(f"argument --platform: {err.message}", hint=err.hint) from None
        model.l1_size, model.l2_size = model.platform.l1_size, model.platform.l2_size
    if ns.output_dir:
        model.output_dir = ns.output_dir
    if ns.l1:
        model.l1_size_from_cli = ns.l1
    if ns.l2:
        model.l2_size_from_cli = ns.l2
    if ns.l3:
        model.l3_size = ns.l3
    if ns.const_dir:
        model.const_dir = model.const_dir_from_cli = ns.const_dir
    if ns.objective:
        if ns.objective not in OBJECTIVES:
            raise OptionsError(f"unknown objective '{ns.objective}'",
                               hint=f"objectives: {', '.join(sorted(OBJECTIVES))}")
        model.ctrl.objective = ns.objective
    model.quiet = ns.quiet


def format_error(err: AutoTilerError) -> str:
    return f"autotiler: error: {err}"


def install_error_hook() -> None:
    """Make an uncaught AutoTilerError print one line on stderr and exit with status 1."""
    if getattr(sys.excepthook, "_autotiler", False):
        return
    previous = sys.excepthook

    def hook(exc_type, exc, tb):
        if isinstance(exc, AutoTilerError):
            print(format_error(exc), file=sys.stderr)
            sys.exit(1)
        previous(exc_type, exc, tb)

    hook._autotiler = True
    sys.excepthook = hook
