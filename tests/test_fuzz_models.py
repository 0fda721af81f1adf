"""Fuzz of the model API ("nothing silent"): random model scripts built from valid and invalid
pieces. For each one, either declaration or generation raises a typed AutoTilerError naming a
line of this file (the model script), or the model generates, builds and computes what numpy
computes, bit for bit, with its output pre-filled by a sentinel. Never a raw Python exception,
a gcc failure on generated code, a hang or a wrong answer.

A *recipe* is a valid model -- a window sum of tests/kernels/SpaceKernels.c (``KerWin_<in>_<out>``:
Out = sum of the Fx x Fy windows of In, zero padding, tiled along T0 with an overlap of the
window, optionally over a batch space D0, parametric or fixed) declared as a tree of API calls
(:class:`N`) whose leaves (:class:`V`) carry a *domain* -- then zero to three mutations of it:

* a leaf replaced by a value of its domain's table (:data:`BAD`): wrong types (str for int,
  float, None, bool), negative, zero, 2**40, C keywords, non-identifiers, names of the generated
  code (L1_Memory, KerArg0, T0Ind, gap_ncore, Tile, the basic kernel's or the kernel's own name,
  runtime names), unknown flag bits, contradictory constraints, undeclared spaces, malformed,
  negative or huge Cost strings, tiny / huge L1 sizes, padding larger than the tile, wrong item
  sizes, ...;
* a structural change (:data:`STRUCTURAL`): wrong counts in count-prefixed lists, items dropped or
  repeated, bindings of the wrong kind (Imm into a pointer, a pointer C argument or a tile into
  an integer formal), bindings to unknown arguments, consistent renames, extra statements.

Each mutation says what must happen (:class:`Outcome`): FAIL (a typed error), SAME (accepted,
same results; only a TilingError may refuse it), ANY (a typed error, or accepted with the same
results) or OTHER (a typed error, or accepted with other semantics: then it must still build).
Mutations the generator cannot refuse yet, and that the lead is fixing, are tagged with a name
of :data:`KNOWN_GAPS`: a recipe that fails only because of them is tolerated (and counted).

``test_fuzz_declarations`` stops at GenerateTilingCode (1000 examples, no build, about 10 s);
``test_fuzz_end_to_end`` (60 examples) builds and runs what is accepted (few builds: the basic-kernel source is
the same for all, so the harness's cache is shared). Both are derandomized (deterministic in CI);
``AUTOTILER_FUZZ_EXAMPLES=N`` runs N random examples of each instead.
"""

from __future__ import annotations

import copy
import enum
import os
import re
import signal
import warnings
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import event as _event
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

import autotiler
import host_harness
from autotiler import *
from autotiler.errors import HarnessError

from .conftest import ROOT

THIS = "test_fuzz_models.py"
KERNELS = ROOT / "tests" / "kernels"
SENTINEL = 0xA5A5A5A5
U = "unsigned int"
T0, D0, D1 = KER_ITER_TILE0, KER_ITER_D0, KER_ITER_D1
SUFFIX = {1: "u8", 2: "u16", 4: "u32"}
DTYPES = {1: np.uint8, 2: np.uint16, 4: np.uint32}

# Misuses the generator does not refuse yet (being fixed): a recipe whose only expected error
# comes from one of these is tolerated when accepted, whatever happens next. Remove a name once
# its fix lands: the fuzz then requires the typed error.
KNOWN_GAPS: set = set()
# fixed, kept in the fuzz as requirements: "tcarg_not_c" (TCArg types that are not valid C),
# "header_quotes" (file names with quotes or newlines), "graph_ctrl" (AT_SetGraphCtrl doing nothing),
# "empty_generation" (GenerateTilingCode() with no kernel), "cost_negative_range" (a Cost negative
# over the declared ranges)
GAPS_SEEN: dict = {}


class Outcome(enum.IntEnum):
    """What a mutation allows, from the strictest; a recipe takes the strictest of its mutations."""

    FAIL = 0    # a typed error
    OTHER = 1   # a typed error, or accepted meaning something else: it must build
    ANY = 2     # a typed error, or accepted with the same results
    SAME = 3    # accepted with the same results (only a TilingError may refuse it)


F, O, A, S = Outcome.FAIL, Outcome.OTHER, Outcome.ANY, Outcome.SAME


# ----------------------------------------------------------------------------------------------
# Recipes: a tree of API calls


@dataclass
class V:
    """A leaf: a value, and the domain its mutations are drawn from ("" for none)."""

    value: object
    dom: str = ""


@dataclass
class N:
    """A call of the model API, by name."""

    fn: str
    args: list
    kwargs: dict = field(default_factory=dict)


@dataclass
class Mutation:
    label: str
    outcome: Outcome
    gap: Optional[str] = None


@dataclass
class Recipe:
    cfg: dict
    stmts: list
    mutations: list = field(default_factory=list)

    @property
    def outcome(self) -> Outcome:
        return min([m.outcome for m in self.mutations], default=S)

    @property
    def only_gaps(self) -> set:
        """The gaps of the mutations expected to fail, when every such mutation has one."""
        failing = [m for m in self.mutations if m.outcome == F]
        if failing and all(m.gap for m in failing):
            return {m.gap for m in failing}
        return set()

    def __repr__(self) -> str:
        return f"Recipe({self.describe()}; config {self.cfg})"

    def describe(self) -> str:
        return "mutations: " + ("; ".join(f"{m.label} [{m.outcome.name}{', gap ' + m.gap if m.gap else ''}]"
                                         for m in self.mutations) or "none")


def execute(node):
    """Run a recipe's tree against the API (inside ``with Model():``): the model script."""
    if isinstance(node, V):
        return node.value
    if isinstance(node, N):
        args = [execute(a) for a in node.args]
        kwargs = {k: execute(v) for k, v in node.kwargs.items()}
        return getattr(autotiler, node.fn)(*args, **kwargs)  # MODEL-SCRIPT-LINE
    return node


def _script_lines() -> set:
    with open(__file__, encoding="utf-8") as f:
        return {i for i, line in enumerate(f, 1) if line.rstrip().endswith("# " + "MODEL-SCRIPT-LINE")}


SCRIPT_LINES = _script_lines()


# ----------------------------------------------------------------------------------------------
# The valid model


def _ptr(item: int) -> str:
    return f"Word{SUFFIX[item]} * __restrict__"


@st.composite
def axis(draw, tiled: bool) -> dict:
    """n output items from windows of f (stride 1), zero padding pb before and pa after; the
    input has n_in = n + f - 1 - pb - pa items."""
    n = draw(st.integers(1, 8 if tiled else 5))
    f = draw(st.integers(1, 3))
    pb, pa = draw(st.integers(0, f - 1)), draw(st.integers(0, f - 1))
    pa = min(pa, n + f - 2 - pb)
    return dict(n=n, f=f, pb=pb, pa=pa, n_in=n + f - 1 - pb - pa)


@st.composite
def configs(draw) -> dict:
    vertical = draw(st.booleans())
    tiled, cross = draw(axis(True)), draw(axis(False))
    uk, cin, cout, cfy = "Fuzz", "In", "Out", "Rows"
    if draw(st.integers(0, 3)) == 0:  # other valid names (the harness calls what the model declares)
        uk = draw(st.sampled_from(["conv_1", "MyKernel", "k"]))
        cin, cout, cfy = draw(st.sampled_from([("Src", "Dst", "Fy"), ("x0", "y0", "n"), ("In", "Out", "Rows")]))
    return dict(
        si=draw(st.sampled_from([1, 2])), so=draw(st.sampled_from([1, 2, 4])), vertical=vertical,
        lines=cross if vertical else tiled, cols=tiled if vertical else cross,
        batch=draw(st.sampled_from([None, None, "par", "fixed"])), nb=draw(st.integers(1, 3)),
        div=draw(st.integers(1, 3)), d_inner=draw(st.booleans()), db_in=draw(st.booleans()),
        db_out=draw(st.booleans()), padded_decl=draw(st.booleans()), fy_carg=draw(st.booleans()),
        uk=uk, cin=cin, cout=cout, cfy=cfy, kin=draw(st.sampled_from(["In", "A"])), kout="Out",
        cost=draw(st.sampled_from([None, "Wo*Ho*Fx*Fy + 20", "((NB*Ho + ncores - 1)/ncores)*Wo*3 + 7", "0"])),
        objective=draw(st.sampled_from(["time", "time", "original", "naive", "max_l1", "traffic"])),
        budget=draw(st.sampled_from([65536, 51200, 16384, 4096, 1024])), promote=draw(st.booleans()),
        symbols=draw(st.booleans()), seed=draw(st.integers(0, 2**16)),
    )


def lib_name(c) -> str:
    return f"KerWin_{SUFFIX[c['si']]}_{SUFFIX[c['so']]}"


FORMALS = ("In", "W", "H", "Pad", "InSR", "InSB", "Out", "Wo", "Ho", "OutSO", "OutSB", "Wt", "WtSO", "WtSR", "Bias",
           "AddBias", "NB", "NO", "NR", "Fx", "Fy", "Sx", "Sy", "Accumulate")


def statements(c) -> list:
    """The model script of config ``c``, as a list of API calls."""
    si, so, lib = c["si"], c["so"], lib_name(c)
    s = [N("SetL1MemorySize", [V(c["budget"], "l1")]),
         N("SetUsedFilesNames", [V(0, ""), V(1, "count_files"), V("SpaceKernels.h", "header")]),
         N("SetGeneratedFilesNames", [V("FuzzGen.c", "gen_file"), V("FuzzGen.h", "gen_file")]),
         N("SetTilingObjective", [V(c["objective"], "objective")])]
    if not c["promote"]:
        s.append(N("AT_SetKernelCtrl", [V(AT_KERNEL_BUFFER_PROMOTE, "kernel_ctrl"), V(AT_OPT_OFF, "opt")]))
    if c["symbols"]:
        s.append(N("SetSymbolNames", [V("FuzzL1", "symbol"), V("FuzzL2", "symbol")]))
    types = {"In": _ptr(si), "Out": _ptr(so), "Wt": _ptr(4), "Bias": _ptr(4), "Pad": "v4s"}
    cargs = [N("TCArg", [V(types.get(n, U), "ctype_ptr" if n in types and n != "Pad" else "ctype"), V(n, "formal")])
             for n in FORMALS]
    kw = {"Cost": V(c["cost"], "cost")} if c["cost"] else {}
    s.append(N("LibKernel", [V(lib, "lib_name"), V(CALL_PARALLEL, "call_type"), N("CArgs", cargs),
                             V(lib + "_T", "par_type")], kw))

    # Iteration space: T0, and a batch space D0 outside or inside it
    iters = [N("IterTiledSpace", [V(T0, "space")])]
    if c["batch"] == "par":
        iters.insert(int(c["d_inner"]), N("IterParSpace", [V(D0, "space"), V(c["nb"], "size"), V(c["div"], "prefdiv")]))
    elif c["batch"]:
        iters.insert(int(c["d_inner"]), N("IterFixedSpace", [V(D0, "space"), V(c["nb"], "size")]))
    kspace = N("KernelIterSpace", [V(len(iters), "count")] + iters)

    def argspace():
        refs = ([V(D0, "space")] if c["batch"] else []) + [V(T0, "space")]
        return N("KerArgSpace", [V(len(refs), "count")] + refs)

    lines, cols, kin, kout = c["lines"], c["cols"], c["kin"], c["kout"]
    t_axis = cols if c["vertical"] else lines
    pad = (cols["pb"], cols["pa"], lines["pb"], lines["pa"])
    in_type = OBJ_IN_DB if c["db_in"] else OBJ_IN
    out_type = OBJ_OUT_DB if c["db_out"] else OBJ_OUT
    tail = [V(si, "item"), V(t_axis["f"] - 1, "overlap"), V(0, "constraint"), V(0, "pref"), V(c["cin"], "carg_ref")]
    if c["padded_decl"] or any(pad):
        kin_decl = N("KerArgP", [V(kin, "karg_name"), argspace(), V(in_type, "objtype_in"), V(cols["n_in"], "size"),
                                 V(lines["n_in"], "size"), V(cols["n_in"], "used"), V(lines["n_in"], "used"),
                                 V(pad, "pad"), V(pad, "pad")] + tail)
    else:
        kin_decl = N("KerArg", [V(kin, "karg_name"), argspace(), V(in_type, "objtype_in"), V(cols["n_in"], "size"),
                                V(lines["n_in"], "size")] + tail)
    kout_decl = N("KerArg", [V(kout, "karg_name"), argspace(), V(out_type, "objtype_out"), V(cols["n"], "size"),
                             V(lines["n"], "size"), V(so, "item"), V(0, "overlap_out"), V(0, "constraint"),
                             V(0, "pref"), V(c["cout"], "carg_ref")])
    uk_cargs = [N("TCArg", [V(_ptr(si), "uk_ctype_ptr"), V(c["cin"], "carg_name")]),
                N("TCArg", [V(_ptr(so), "uk_ctype_ptr"), V(c["cout"], "carg_name")])]
    if c["fy_carg"]:
        uk_cargs.append(N("TCArg", [V(U, "uk_ctype_int"), V(c["cfy"], "carg_name")]))

    def imm(v):
        return N("Imm", [V(v, "imm")])

    def k(name, sel, dom):
        return N("K_Arg", [V(name, "karg_ref"), V(sel, dom)])

    batch = bool(c["batch"])
    nb = N("K_ArgPar", [V(kin, "karg_ref"), V(KER_ARG_PARTILE_SIZE, "sel_int"), V(D0, "space")]) if batch else imm(1)
    fy = N("C_Arg", [V(c["cfy"], "cvar_ref")]) if c["fy_carg"] else imm(lines["f"])
    bindings = [k(kin, KER_ARG_TILE, "sel_ptr"), k(kin, KER_ARG_TILE_W, "sel_int"), k(kin, KER_ARG_TILE_H, "sel_int"),
                k(kin, KER_ARG_TILE_PAD, "sel_pad"), imm(0), imm(int(batch)),
                k(kout, KER_ARG_TILE, "sel_ptr"), k(kout, KER_ARG_TILE_W, "sel_int"), k(kout, KER_ARG_TILE_H, "sel_int"),
                imm(0), imm(int(batch)), N("Imm", [V(0, "imm_ptr")]), imm(0), imm(0), N("Imm", [V(0, "imm_ptr")]),
                imm(1), nb, imm(1), imm(1), imm(cols["f"]), fy, imm(1), imm(1), imm(0)]
    inner_d = batch and c["d_inner"]
    call = N("Call", [V(lib, "call_name"), V(LOC_D0 if inner_d else LOC_LOOP, "loc"), N("Bindings", bindings)])
    s.append(N("UserKernel", [V(c["uk"], "uk_name"), kspace, V(TILE_VER if c["vertical"] else TILE_HOR, "orient"),
                              N("CArgs", uk_cargs), N("Calls", [call]), N("KerArgs", [kin_decl, kout_decl])]))
    s.append(N("GenerateTilingCode", []))
    return s


# ----------------------------------------------------------------------------------------------
# The reference


def make_args(c, rng) -> tuple:
    lines, cols = c["lines"], c["cols"]
    planes = (c["nb"],) if c["batch"] else ()
    dt_in, dt_out = DTYPES[c["si"]], DTYPES[c["so"]]
    x = rng.integers(0, np.iinfo(dt_in).max, planes + (lines["n_in"], cols["n_in"]), dtype=dt_in, endpoint=True)
    out = np.full(planes + (lines["n"], cols["n"]), SENTINEL & np.iinfo(dt_out).max, dtype=dt_out)
    return x, out


def reference(c, x) -> np.ndarray:
    """Sums of the zero-padded fy x fx windows of each plane of x, wrapped to Out's type."""
    lines, cols = c["lines"], c["cols"]
    xp = np.zeros(x.shape[:-2] + (lines["n"] + lines["f"] - 1, cols["n"] + cols["f"] - 1), dtype=np.uint64)
    xp[..., lines["pb"]:lines["pb"] + lines["n_in"], cols["pb"]:cols["pb"] + cols["n_in"]] = x
    out = np.zeros(x.shape[:-2] + (lines["n"], cols["n"]), dtype=np.uint64)
    for ky in range(lines["f"]):
        for kx in range(cols["f"]):
            out += xp[..., ky:ky + lines["n"], kx:kx + cols["n"]]
    return (out & ((1 << (8 * c["so"])) - 1)).astype(DTYPES[c["so"]])


# ----------------------------------------------------------------------------------------------
# Mutations of a leaf, by domain: (value, outcome[, gap]); a callable gets the current value and
# the config and returns such a list.

WRONG = [("7", F), (7.5, F), (None, F), (True, F)]
HUGE = 2**40
NOT_NAMES = [(7, F), (None, F), ("", F), ("2x", F), ("a b", F), ("In-1", F), ("int", F), ("for", F), ("é", F),
             (True, F)]
GENERATED = ["KerArg0", "T0Ind", "gap_ncore"]
# runtime names: no user kernel may take them; a parameter may (it hides them in its function only)
RUNTIME = ["printf", "AT_FORK", "Word32"]


def memory_symbols(c) -> list:
    """The memory symbols' names (FAIL as other names), and the default ones when renamed (free again)."""
    if c["symbols"]:
        return [("FuzzL1", F), ("FuzzL2", F), ("L1_Memory", A), ("L2_Memory", A)]
    return [("L1_Memory", F), ("L2_Memory", F)]


def _uk_names(v, c):
    out = NOT_NAMES + memory_symbols(c) + [(n, F) for n in ("gap_ncore", "printf", "AT_FORK", "Word32", "main",
                                                            lib_name(c), lib_name(c) + "_T")]
    # 'Tile' is a name of the original's generated code, not of ours: free here
    return out + [("Tile", S), ("KerArg0", A), ("T0Ind", A), ("Fuzz2", S)]


def _carg_names(v, c):
    others = {c["cin"], c["cout"], c["cfy"] if c["fy_carg"] else None} - {v}
    return NOT_NAMES + memory_symbols(c) + \
        [(n, F) for n in GENERATED + [lib_name(c), lib_name(c) + "_T", *others - {None}]] + [(n, A) for n in RUNTIME] + \
        [("Nope", F)]  # renamed here only: what refers to it names an unknown C argument


def _cost(v, c):
    deep = "+".join(["Wo"] * 3000)
    return [(7, F), (7.5, F), (None, S), (True, F), ("Wo*", F), ("", F), ("-1", F), ("Fx**2", F), ("Nope*2", F),
            ("In*2", F), ("__import__('os')", F), ("Wo/(Fx-Fx)", A), (deep, A), ("1" + "*1000000000" * 6, A),
            ("Wo - 100000", F, "cost_negative_range"), ("0 - Wo", F, "cost_negative_range"), ("Wo*Ho", S)]


def _objtype_in(v, c):
    return WRONG + [(-1, F), (HUGE | v, F), (1 << 30, F), (v | O_BIT, F), (v | O_OUT, O), (v & ~O_DB, S),
                    (v | O_DB, S), (v | O_L2DB, S), (v | O_CONST, S), (v | O_3D, F), (O_BUFF, F), (0, F),
                    (v | O_ONETILE, F), (v | O_TILE1, F), (v | O_NO_STORE, F)]


def _objtype_out(v, c):
    return WRONG + [(-1, F), (HUGE | v, F), (v | O_CONST, F), (v | O_IN, O), (v & ~O_DB, S), (v | O_L2DB, S),
                    (v | O_4D, F), (v | O_NO_LOAD, F), (0, F)]


def _item(v, c):
    # items of a multiple of the pointee's size are legal (a CNN filter of Fx*Fy shorts is one item); they
    # change what the kernel computes, so only "accepted and compiles" is asked of them
    other = [(n, O) if n % v == 0 else (n, F, "item_size_vs_pointee") for n in (1, 2, 4, 3) if n != v]
    return WRONG + [(-1, F), (0, F), (HUGE, F)] + other


def _used(v, c):
    return [("7", F), (7.5, F), (None, S), (True, F), (-1, F), (0, F), (HUGE, F), (v + 1, F)] + \
        ([(v - 1, O)] if v > 1 else [])


def _pad(v, c):
    return [("0", F), (1.5, F), (True, F), (None, S if not any(v) else O), ((0, 0, -1, 0), F), ((1, 2, 3), F),
            ((0, 0, True, 0), F), ((0, 0, HUGE, 0), F), ((9, 9, 50, 50), O), ((v[0], v[1], v[2] + 1, v[3]), O),
            (tuple(v), S)]


def _space(v, c):
    return WRONG + [(-1, F), (HUGE, F), (HUGE + v, F), ((1 << 32) + v, F), (v | 0x100000, F), (D1, F),
                    (KER_ITER_TILE1, F), ("KER_ITER_TILE0", F)]


def _l1(v, c):
    return WRONG + [(-1, F), (0, F), (1, F), (HUGE, F), (2**31, F), ("51200", F), (65536, S)]


def _header(v, c):
    return [(5, F), (None, F), ("", F), ("dir/x.h", F), ("..\\x.h", F), ('Space"Kernels.h', F, "header_quotes"),
            ("SpaceKernels.h\n", F, "header_quotes"), (True, F)]


def _gen_file(v, c):
    other = "FuzzGen.h" if v.endswith(".c") else "FuzzGen.c"
    return [(5, F), (None, F), ("", F), ("a/b.c", F), (other, F), ('x".c', F, "header_quotes"),
            ("FuzzGen.json", F), ("Other" + v[-2:], S)]


def _selector_ptr(v, c):
    return WRONG + [(-1, F), (HUGE, F), (KER_ARG_TILE_W, F), (KER_ARG_TILE_PAD, F), (KER_ARG_FIRST_TILE, F),
                    (KER_ARG_NONE, F), ("KER_ARG_TILE", F)]


def _selector_int(v, c):
    return WRONG + [(-1, F), (HUGE, F), (KER_ARG_TILE, F), (KER_ARG_TILE_PAD, F), (KER_ARG_FIRST_TILE_H, F),
                    (KER_ARG_TILE_NEXTDB, F)]


def _selector_pad(v, c):
    return WRONG + [(-1, F), (HUGE, F), (KER_ARG_TILE, F), (KER_ARG_TILE_W, F), (KER_ARG_TILEFIRST, F)]


BAD = {
    "size": lambda v, c: WRONG + [(-1, F), (0, F), (HUGE, F), (2**31, F)],
    "prefdiv": lambda v, c: WRONG + [(-1, F), (0, F), (HUGE, S), (v + 1, S)],
    "count": lambda v, c: WRONG + [(-1, F), (HUGE, F), (v + 1, F), (v - 1, F)],
    "count_files": lambda v, c: [("7", F), (7.5, F), (None, S), (True, F), (-1, F), (2, F), (0, F), (HUGE, F)],
    "space": _space,
    "objtype_in": _objtype_in,
    "objtype_out": _objtype_out,
    "constraint": lambda v, c: [("7", F), (7.5, F), (None, S), (True, F), (-1, F), (HUGE, F), (1 << 30, F),
                                (OBJ_CONSTRAINTS_EVEN | OBJ_CONSTRAINTS_ODD, F),
                                (OBJ_CONSTRAINTS_TILE_HOR | OBJ_CONSTRAINTS_TILE_VER, F),
                                (OBJ_CONSTRAINTS_PAD_REM | OBJ_CONSTRAINTS_DROP_REM, F),
                                (OBJ_CONSTRAINTS_ONEPREFTILE, F), (OBJ_CONSTRAINTS_DYNAMIC, F),
                                (OBJ_CONSTRAINTS_2D, F), (OBJ_CONSTRAINTS_EVEN, A), (OBJ_CONSTRAINTS_ODD, A)],
    "pref": lambda v, c: [("2", F), (2.5, F), (None, S), (True, F), (-1, F), (HUGE, A), (2, A), (3, A)],
    "overlap": lambda v, c: WRONG + [(HUGE, F), (-1 if v == 0 else v - 1, O), (v + 1, O)],
    "overlap_out": lambda v, c: WRONG + [(-1, F), (HUGE, F), (1, O)],
    "used": _used,
    "pad": _pad,
    "item": _item,
    "imm": lambda v, c: WRONG + [(-1, F), (HUGE, F), (2**70, F), (2**32, F), (v + 1, O)],
    "imm_ptr": lambda v, c: WRONG + [(3, F), (-1, F), (HUGE, F)],
    "uk_name": _uk_names,
    "carg_name": _carg_names,
    "karg_name": lambda v, c: NOT_NAMES + [("Nope", F)],
    "formal": lambda v, c: NOT_NAMES + [(n, F) for n in ("W", "Out", "Accumulate") if n != v],
    "lib_name": lambda v, c: NOT_NAMES + [(n, F) for n in ("FuzzL1" if c["symbols"] else "L1_Memory", "printf",
                                                            "gap_ncore", c["uk"], "Nope")],
    "call_name": lambda v, c: NOT_NAMES + [("Nope", F), (c["uk"], F)],
    "par_type": lambda v, c: [(7, F), (7.5, F), (None, F), (True, F), ("", F), ("2x", F), ("int", F), ("for", F),
                              ("FuzzL1" if c["symbols"] else "L1_Memory", F), ("Word32", F), (c["uk"], F), (lib_name(c), F)],
    "karg_ref": lambda v, c: NOT_NAMES + [("Nope", F)],
    "carg_ref": lambda v, c: [(7, F), (7.5, F), (True, F), ("2x", F), ("int", F), (None, F), ("", F), ("Nope", F),
                              ((c["cout"] if v == c["cin"] else c["cin"]), O)],
    "cvar_ref": lambda v, c: NOT_NAMES + [("Nope", F), (c["cin"], F)],
    "ctype": lambda v, c: [(5, F), (None, F), ("", F), ("   ", F), (True, F), ("int ** [", F, "tcarg_not_c"),
                           ("unsigned int;", F, "tcarg_not_c"), ("struct", F, "tcarg_not_c"),
                           ("7", F, "tcarg_not_c")],
    "ctype_ptr": lambda v, c: [(5, F), (None, F), ("", F), (True, F), ("int ** [", F, "tcarg_not_c"),
                               ("* __restrict__", F, "tcarg_not_c")],
    "uk_ctype_ptr": lambda v, c: [(5, F), (None, F), ("", F), (True, F), ("unsigned int", F),
                                  ("int ** [", F, "tcarg_not_c"), ("Word8 ((*", F, "tcarg_not_c")],
    "uk_ctype_int": lambda v, c: [(5, F), (None, F), ("", F), ("Wordu8 *", F), ("int ** [", F, "tcarg_not_c")],
    "cost": _cost,
    "l1": _l1,
    "header": _header,
    "gen_file": _gen_file,
    "objective": lambda v, c: [(5, F), (None, F), (True, F), ("fastest", F), ("TIME", F), ("original", S)],
    "orient": lambda v, c: WRONG + [(-1, F), (5, F), (HUGE, F), (TILE_HWC, F), (1 - v, O)],
    "loc": lambda v, c: WRONG + [(-1, F), (99, F), (HUGE, F), (LOC_D1, F), (LOC_GROUP, F), ("LOC_LOOP", F),
                                 (LOC_PROLOG, A), (LOC_LOOP_EPILOG, A), (LOC_D2_PROLOG, F)],
    "call_type": lambda v, c: WRONG + [(-1, F), (HUGE, F), (1 << 5, F), (v | 64, F)],
    "sel_ptr": _selector_ptr,
    "sel_int": _selector_int,
    "sel_pad": _selector_pad,
    "kernel_ctrl": lambda v, c: WRONG + [(-1, F), (HUGE, F), (AT_GRAPH_TRACE_EXEC, F), (99, F)],
    "opt": lambda v, c: [("on", F), (7.5, F), (None, F), (-1, F), (2, F), (HUGE, F), (True, S), (False, S)],
    "symbol": lambda v, c: NOT_NAMES + [(n, F) for n in ("KerArg0", "T0Ind", "gap_ncore", "printf", c["cin"],
                                                        lib_name(c), lib_name(c) + "_T", c["uk"])] + [("MySym", A)],
}


def _leaves(node, out=None) -> list:
    """(container, key, leaf) of every mutable leaf, in a fixed order."""
    out = [] if out is None else out
    if isinstance(node, N):
        for i, a in enumerate(node.args):
            if isinstance(a, V) and a.dom in BAD:
                out.append((node.args, i, a))
            _leaves(a, out)
        for key, a in node.kwargs.items():
            if isinstance(a, V) and a.dom in BAD:
                out.append((node.kwargs, key, a))
            _leaves(a, out)
    elif isinstance(node, list):
        for a in node:
            _leaves(a, out)
    return out


def _nodes(node, fns, out=None) -> list:
    out = [] if out is None else out
    if isinstance(node, N):
        if node.fn in fns:
            out.append(node)
        for a in list(node.args) + list(node.kwargs.values()):
            _nodes(a, fns, out)
    elif isinstance(node, list):
        for a in node:
            _nodes(a, fns, out)
    return out


COUNTED = ("CArgs", "Calls", "KerArgs", "Bindings", "KernelIterSpace")


def _user_kernel(stmts) -> Optional[N]:
    return next((s for s in stmts if s.fn == "UserKernel"), None)


def _bindings(stmts) -> Optional[list]:
    uk = _user_kernel(stmts)
    if uk is None:
        return None
    calls = [n for n in _nodes(uk, ("Bindings",))]
    return calls[0].args if calls else None


# Structural mutations: f(draw, recipe) -> Mutation, or None when it does not apply.

def m_count(draw, r):
    nodes = _nodes(r.stmts, COUNTED)
    if not nodes:
        return None
    node = draw(st.sampled_from(nodes))
    if node.args and isinstance(node.args[0], V) and node.args[0].dom == "count":
        return None
    n = len(node.args)
    count = draw(st.sampled_from([n, n + 1, max(n - 1, 0), n + 2]))
    node.args.insert(0, V(count))
    return Mutation(f"{node.fn}({count}, ...) with {n} item(s)", S if count == n else F)


def m_drop(draw, r):
    nodes = [n for n in _nodes(r.stmts, COUNTED + ("KerArgSpace",)) if len(n.args) > 1]
    if not nodes:
        return None
    node = draw(st.sampled_from(nodes))
    i = draw(st.integers(0, len(node.args) - 1))
    if isinstance(node.args[i], V):
        return None
    del node.args[i]
    if node.args and isinstance(node.args[0], V) and node.args[0].dom == "count":
        node.args[0] = V(node.args[0].value - 1)  # a consistent count: the item is missing
    return Mutation(f"item {i} of {node.fn} dropped", F)


def m_repeat(draw, r):
    nodes = [n for n in _nodes(r.stmts, COUNTED + ("KerArgSpace",)) if n.args]
    node = draw(st.sampled_from(nodes))
    i = draw(st.integers(0, len(node.args) - 1))
    if isinstance(node.args[i], V):
        return None
    node.args.insert(i, copy.deepcopy(node.args[i]))
    if isinstance(node.args[0], V) and node.args[0].dom == "count":
        node.args[0] = V(node.args[0].value + 1)
    # a call made twice at the same place (Accumulate 0) computes the same; a name or a space twice is an error
    return Mutation(f"item {i} of {node.fn} repeated", S if node.fn == "Calls" else F)


def m_binding(draw, r):
    """A binding replaced by one of the wrong kind or naming something unknown."""
    b = _bindings(r.stmts)
    if not b:
        return None
    c = r.cfg
    i = draw(st.integers(0, len(b) - 1))
    pointer = FORMALS[i] in ("In", "Out", "Wt", "Bias")
    choices = [(N("K_Arg", [V("Nope"), V(KER_ARG_TILE if pointer else KER_ARG_TILE_W)]), F, "K_Arg of an unknown argument"),
               (N("C_Arg", [V("Nope")]), F, "C_Arg of an unknown C argument"),
               (N("K_ArgPar", [V(c["kin"]), V(KER_ARG_PARTILE_SIZE), V(D1)]), F, "K_ArgPar of an undeclared space"),
               (N("UserSymb", [V("X")]), F, "UserSymb"), (N("BindKExpr", [V("X")]), F, "BindKExpr"),
               (N("KerDim", [V(K_W)]), F, "KerDim in a v3 kernel"),
               (N("KG_ArgOper", [V(c["cin"]), V("*"), V(2)]), F, "KG_ArgOper in a user kernel")]
    if pointer:
        choices += [(N("Imm", [V(3)]), F, "Imm(3) into a pointer"),
                    (N("K_Arg", [V(c["kin"]), V(KER_ARG_TILE_W)]), F, "a tile width into a pointer"),
                    (N("C_Arg", [V(c["cfy"])]), F if c["fy_carg"] else F, "an integer C argument into a pointer"),
                    (N("C_ArgPlusImmOffset", [V(c["cin"]), V(1)]), O, "a C argument + 1 into a pointer")]
    elif FORMALS[i] == "Pad":
        choices += [(N("Imm", [V(0)]), O, "Imm(0) into a v4s"), (N("C_Arg", [V(c["cin"])]), F, "a pointer into a v4s")]
    else:
        choices += [(N("C_Arg", [V(c["cin"])]), F, "a pointer C argument into an integer"),
                    (N("K_Arg", [V(c["kin"]), V(KER_ARG_TILE)]), F, "a tile into an integer"),
                    (N("C_ArgIndex", [V(c["cin"]), V(D1), V(1)]), F, "C_ArgIndex of an undeclared space"),
                    (N("Ker_IteratorIndex", [V(D1)]), F, "Ker_IteratorIndex of an undeclared space"),
                    (N("K_ArgPred", [V(c["kin"]), V(KER_ARG_TILE_W), V(T0)]), F, "K_ArgPred of a size"),
                    (N("K_ArgOp", [V(c["kin"]), V(KER_ARG_TILE_W), V("@"), V(1)]), F, "K_ArgOp with '@'"),
                    (N("Imm", [V(-5)]), F, "Imm(-5) into an unsigned int")]
    new, outcome, label = draw(st.sampled_from(choices))
    b[i] = new
    return Mutation(f"binding {i} ({FORMALS[i]}): {label}", outcome)


def m_rename_carg(draw, r):
    """A C argument of the user kernel renamed consistently (TCArg, CArgName, C_Arg)."""
    c = r.cfg
    old = draw(st.sampled_from([c["cin"], c["cout"]] + ([c["cfy"]] if c["fy_carg"] else [])))
    names = memory_symbols(c) + [(n, F) for n in GENERATED + [lib_name(c), lib_name(c) + "_T", "int", "2x"]] + \
        [(n, A) for n in RUNTIME] + \
        [("Tile", A), (c["uk"], A), ("Fresh", S), ("W", S)]
    new, outcome = draw(st.sampled_from(names))
    for cont, key, leaf in _leaves(r.stmts):
        if leaf.dom in ("carg_name", "carg_ref", "cvar_ref") and leaf.value == old:
            cont[key] = V(new, leaf.dom)
    return Mutation(f"C argument {old!r} renamed {new!r} everywhere", outcome)


def m_rename_karg(draw, r):
    c = r.cfg
    old = draw(st.sampled_from([c["kin"], c["kout"]]))
    new, outcome = draw(st.sampled_from([("L1_Memory", S), ("KerArg0", S), ("T0Ind", S), ("Tile", S), ("x", S),
                                         ("int", F), ("a b", F)]))
    if new in (c["kin"], c["kout"]):
        return None
    for cont, key, leaf in _leaves(r.stmts):
        if leaf.dom in ("karg_name", "karg_ref") and leaf.value == old:
            cont[key] = V(new, leaf.dom)
    return Mutation(f"kernel argument {old!r} renamed {new!r} everywhere", outcome)


def m_statement(draw, r):
    """A statement added or removed."""
    c = r.cfg
    choices = [
        ("no user kernel", F, "empty_generation"),
        ("AT_SetGraphCtrl(AT_GRAPH_ARG2STRUCT, AT_OPT_ON)", F, "graph_ctrl"),
        ("GenerateTilingCode() twice", S, None),
        ("SetL1MemorySize after the kernel", S, None),
        ("SetSymbolNames(L1 = the kernel's name)", F, None),
        ("OpenKernelGroup left open", F, None),
        ("UserKernel declared twice", F, None),
        ("PopUserKernel() before generation", F, "empty_generation"),
        ("LibKernel declared again differently", F, None),
        ("SetKernelArgInterleave", F, None),
        ("SetInlineMode(NEVER_INLINE)", F, None),
        ("SetStyle(1)", F, None),
        ("KerArgAliased in KerArgs", F, None),
    ]
    label, outcome, gap = draw(st.sampled_from(choices))
    s = r.stmts
    uk = _user_kernel(s)
    if uk is None:
        return None
    at = s.index(uk)
    if label == "no user kernel":
        s.remove(uk)
    elif label.startswith("AT_SetGraphCtrl"):
        s.insert(0, N("AT_SetGraphCtrl", [V(AT_GRAPH_ARG2STRUCT), V(AT_OPT_ON)]))
    elif label.startswith("GenerateTilingCode"):
        s.append(N("GenerateTilingCode", []))
    elif label.startswith("SetL1MemorySize"):
        s.insert(at + 1, N("SetL1MemorySize", [V(1)]))
    elif label.startswith("SetSymbolNames"):
        s.insert(at + 1, N("SetSymbolNames", [V(c["uk"]), V("FuzzL2b")]))
    elif label.startswith("OpenKernelGroup"):
        s.insert(at, N("OpenKernelGroup", [V("G")]))
    elif label.startswith("UserKernel declared twice"):
        s.insert(at + 1, copy.deepcopy(uk))
    elif label.startswith("PopUserKernel"):
        s.insert(at + 1, N("PopUserKernel", []))
    elif label.startswith("LibKernel"):
        s.insert(at, N("LibKernel", [V(lib_name(c)), V(CALL_SEQUENTIAL), N("CArgs", []), V("")]))
    elif label.startswith("SetKernelArgInterleave"):
        s.insert(at + 1, N("SetKernelArgInterleave", [V(c["uk"]), V(c["kin"]), V(1)]))
    elif label.startswith("SetInlineMode"):
        s.insert(0, N("SetInlineMode", [V(NEVER_INLINE)]))
    elif label.startswith("SetStyle"):
        s.insert(0, N("SetStyle", [V(1)]))
    else:
        kerargs = _nodes(uk, ("KerArgs",))[0]
        kerargs.args.append(N("KerArgAliased", [V("Al"), N("KerArgSpace", [V(1), V(T0)]), V(c["kin"]), V(OBJ_IN),
                                                V(1), V(1), V(1)]))
    return Mutation(label, outcome, gap)


def m_leaf(draw, r):
    leaves = _leaves(r.stmts)
    cont, key, leaf = draw(st.sampled_from(leaves))
    table = BAD[leaf.dom](leaf.value, r.cfg)
    choice = draw(st.sampled_from(table))
    value, outcome, gap = (choice + (None,))[:3]
    cont[key] = V(value, "!" + leaf.dom)  # mutated once: not again, and not renamed
    return Mutation(f"{leaf.dom} {leaf.value!r} -> {value!r}"[:160], outcome, gap)


STRUCTURAL = [m_count, m_drop, m_repeat, m_binding, m_rename_carg, m_rename_karg, m_statement]


@st.composite
def recipes(draw, mutation_counts) -> Recipe:
    c = draw(configs())
    r = Recipe(c, statements(c))
    n = draw(st.sampled_from(mutation_counts))
    # at most one structural mutation, first: it may drop or replace a part another one mutated
    ops = ([draw(st.sampled_from(STRUCTURAL))] if n and draw(st.integers(0, 2)) == 0 else [])
    for op in ops + [m_leaf] * (n - len(ops)):
        m = op(draw, r)
        if m is not None:
            r.mutations.append(m)
    return r


# ----------------------------------------------------------------------------------------------
# Running a recipe


def event(text: str) -> None:
    """hypothesis.event, also outside a hypothesis test (the hand-written cases)."""
    try:
        _event(text)
    except InvalidArgument:
        pass


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang("no answer after the time limit")


def run_recipe(r: Recipe, out_dir, seconds: int):
    """Declare and generate the recipe's model in a fresh Model: (model, None) or (None, error)."""
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(seconds)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with Model() as m:
                m.output_dir, m.quiet = str(out_dir), True
                try:
                    for s in r.stmts:
                        execute(s)
                except AutoTilerError as err:
                    return None, err
                return m, None
    except Hang:
        pytest.fail(f"hang: {r.describe()}")
    except Exception as err:  # noqa: BLE001 -- what this test is about
        raise AssertionError(f"raw {type(err).__name__} ({err}) instead of a typed error; {r.describe()}") from err
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


WHERE = re.compile(r"(?:^|[/\\])" + re.escape(THIS) + r":(\d+)$")


def check_error(r: Recipe, err: AutoTilerError) -> None:
    what = f"{type(err).__name__}: {err}; {r.describe()}"
    assert not isinstance(err, HarnessError), what
    m = WHERE.search(err.where or "")
    assert m and int(m.group(1)) in SCRIPT_LINES, f"the error does not name the model script's line: {what}"
    assert f"{THIS}:{m.group(1)}" in str(err), what
    outcome = r.outcome
    if outcome == S:
        # a mutation that changes nothing may only meet a budget no tiling fits
        assert isinstance(err, TilingError), f"a valid model refused: {what}"
    event(f"refused: {type(err).__name__}")


def tolerated(r: Recipe, what: str) -> bool:
    """Whether a recipe accepted although it should fail fails only because of known gaps."""
    gaps = r.only_gaps
    if gaps and gaps <= KNOWN_GAPS:
        for g in gaps:
            GAPS_SEEN[g] = GAPS_SEEN.get(g, 0) + 1
        event(f"known gap {sorted(gaps)}: {what}")
        return True
    return False


def check_accepted(r: Recipe, m, out_dir, build: bool) -> None:
    """An accepted recipe: refused ones must not be; built and run when asked."""
    if r.outcome == F:
        if tolerated(r, "accepted"):
            return
        pytest.fail(f"silently accepted: {r.describe()}")
    event("accepted")
    if not build:
        return
    try:
        program = host_harness.build(out_dir, sources=[KERNELS / "SpaceKernels.c"], include_dirs=[KERNELS],
                                     platform=m.platform)
    except HarnessError as err:
        if tolerated(r, "build failed"):
            return
        pytest.fail(f"an accepted model does not build: {err}; {r.describe()}")
    if r.outcome == O:
        return
    ((name, uk),) = m.kernels.items()
    c = r.cfg
    x, out = make_args(c, np.random.default_rng(c["seed"]))
    values = [x, out, c["lines"]["f"]]
    args = {carg.name: v for carg, v in zip(uk.cargs, values)}
    program.call(name, **args)
    np.testing.assert_array_equal(out, reference(c, x), err_msg=r.describe())


def _examples(default: int) -> dict:
    n = os.environ.get("AUTOTILER_FUZZ_EXAMPLES")
    if n:
        return dict(max_examples=int(n), derandomize=False, database=None)
    return dict(max_examples=default, derandomize=True, database=None)


SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                                       HealthCheck.filter_too_much, HealthCheck.data_too_large])


@settings(**_examples(1000), **SETTINGS)
@given(r=recipes(mutation_counts=[0, 1, 1, 1, 1, 1, 2, 2, 3]))
def test_fuzz_declarations(r, tmp_path_factory):
    out_dir = tmp_path_factory.mktemp("fuzz_decl")
    m, err = run_recipe(r, out_dir, seconds=30)
    if err is not None:
        check_error(r, err)
    else:
        check_accepted(r, m, out_dir, build=False)


@settings(**_examples(60), **SETTINGS)
@given(r=recipes(mutation_counts=[0, 0, 1, 1, 1, 2]))
def test_fuzz_end_to_end(r, tmp_path_factory):
    out_dir = tmp_path_factory.mktemp("fuzz_e2e")
    m, err = run_recipe(r, out_dir, seconds=60)
    if err is not None:
        check_error(r, err)
    else:
        check_accepted(r, m, out_dir, build=True)


# A small valid model with everything on (batch, padding, a C argument, several tiles)
BASE = dict(si=1, so=2, vertical=False, lines=dict(n=5, f=3, pb=1, pa=1, n_in=5), cols=dict(n=4, f=2, pb=1, pa=0, n_in=4),
            batch="par", nb=3, div=2, d_inner=False, db_in=True, db_out=True, padded_decl=True, fy_carg=True,
            uk="Fuzz", cin="In", cout="Out", cfy="Rows", kin="In", kout="Out", cost="Wo*Ho*Fx*Fy + 20",
            objective="time", budget=160, promote=False, symbols=True, seed=3)


def test_the_unmutated_recipes_run(tmp_path):
    """The fuzz's base model is right before it is mutated."""
    r = Recipe(BASE, statements(BASE))
    m, err = run_recipe(r, tmp_path, seconds=60)
    assert err is None, err
    assert m.tilings["Fuzz"].ntiles > 1
    check_accepted(r, m, tmp_path, build=True)


def _set_leaf(stmts, dom, old, new) -> None:
    (cont, key, _), *_ = [x for x in _leaves(stmts) if x[2].dom == dom and (old is None or x[2].value == old)]
    cont[key] = V(new)


def _gap_case(gap: str, stmts: list) -> None:
    """Apply the mutation of ``gap`` to the base model's statements."""
    if gap == "tcarg_not_c":
        _set_leaf(stmts, "ctype", U, "int ** [")
    elif gap == "header_quotes":
        _set_leaf(stmts, "header", None, 'Space"Kernels.h')
    elif gap == "graph_ctrl":
        stmts.insert(0, N("AT_SetGraphCtrl", [V(AT_GRAPH_ARG2STRUCT), V(AT_OPT_ON)]))
    elif gap == "empty_generation":
        stmts.remove(_user_kernel(stmts))
    elif gap == "cost_negative_range":
        stmts[[s.fn for s in stmts].index("LibKernel")].kwargs["Cost"] = V("Wo - 100000")


GAPS = sorted(KNOWN_GAPS | {"tcarg_not_c", "header_quotes", "graph_ctrl", "empty_generation", "cost_negative_range"})


@pytest.mark.parametrize("gap", [pytest.param(g, marks=pytest.mark.xfail(
    g in KNOWN_GAPS, reason=f"known gap {g} (KNOWN_GAPS): remove it from the set once fixed", strict=True))
    for g in GAPS])
def test_known_gap(gap, tmp_path):
    """Each gap of KNOWN_GAPS on the base model: refused with a typed error naming this file.
    Strict xfail while it is in KNOWN_GAPS, so that its fix is noticed (then drop the name)."""
    r = Recipe(BASE, statements(BASE), [Mutation(gap, F, gap)])
    _gap_case(gap, r.stmts)
    m, err = run_recipe(r, tmp_path, seconds=60)
    assert err is not None, f"{gap}: accepted"
    check_error(r, err)
