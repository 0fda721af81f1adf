"""Property test, end to end, of v3 iteration spaces: random user kernels with 1 to 3 spaces
(IterTiledSpace(T0), IterParSpace and IterFixedSpace on D0..D3, in any order), generated,
compiled, run on the simulated chip and compared bit-exactly with numpy.

Each kernel computes, per tile, a window sum (Fx x Fy, strides Sx x Sy, zero padding) of the
planes of an input ``In``, weighted per (output plane, input plane) pair by ``Wt`` and plus a
``Bias``, into the planes of an output ``Out`` (tests/kernels/SpaceKernels.c). Each D space plays
one role:

* ``O``: output planes (Out, Wt, Bias and the accumulator traverse it, In does not);
* ``R``: a reduction (In and Wt traverse it, Out does not): summed into an in-out Out
  (``inout``), into an O_OUT Out set to the bias at LOC_R_PROLOG (``init``), or into an int32
  O_BUFF|O_ONETILE accumulator set at LOC_R_PROLOG, accumulated at LOC_R and narrowed into Out
  at LOC_R_EPILOG (``acc``, as the SDK's CNN convolutions);
* ``B``: a batch (In and Out traverse it);
* ``rep`` (a fixed space): no argument traverses it: the calls run again (an in-out Out
  accumulates again).

Arguments: KerArg / KerArgP with KerArgSpace over subsets of the spaces in random orders (the
tiled space last; a D space may be traversed backwards, SPACE_PROP_REVERT, by all of them);
zero padding (PadExec, per tile through KER_ARG_TILE_PAD; PadTile larger when Out has padding
of its own, as a convolution followed by a padded pooling), UsedW/UsedH, TileOverlap (negative
for a 1-wide window of stride 2), input:output ratios (strides 2), remainders
(OBJ_CONSTRAINTS_PAD_REM / DROP_REM, and uneven last tiles), PreferedTileSize, TILE_HOR /
TILE_VER (the kernel's orientation or each argument's OBJ_CONSTRAINTS_TILE_*), single and double
buffering, O_BUFF inputs, O_CONST, homes in L3 (O_L2DB), bindings
K_ArgPar(KER_ARG_PARTILE_SIZE) (chunk sizes), K_ArgPar(KER_ARG_LOADEDPARTILE_SIZE) (strides in a
box resident over a whole space), K_ArgPred(KER_ARG_TILEFIRST), Imm(0) pointers. Objectives:
mostly the default "time", also "original", "traffic", "naive", "max_l1"; buffer and partial
promotion on or off; L1 budgets from barely-fits to everything-fits
(autotiler.objectives.footprint_range).

Checks: Out equal to the numpy reference (outputs pre-filled with a sentinel unless in-out),
peak L1 equal to the tiling's L1 and within the budget, simulated cycles and L2<->L1 and
L3<->L2 traffic equal to the predicted ones, and the verifier passes on the emitted schedule
(it also runs inside the tiler: a CodegenError fails the test).
"""

import collections
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

import host_harness
from autotiler import *
from autotiler.codegen import generate, write_files
from autotiler.objectives import footprint_range
from autotiler.platforms import get_platform
from autotiler.schedule.verify import verify

from .conftest import ROOT

KERNELS = ROOT / "tests" / "kernels"
# More L1 and L2 than the chip, so that budgets up to everything-fits can be given
PLATFORM = get_platform("gap8", l1_size=1024 * 1024, l2_size=4 * 1024 * 1024)
NAME = "Spaces"
T0 = KER_ITER_TILE0
D_SPACES = (KER_ITER_D0, KER_ITER_D1, KER_ITER_D2, KER_ITER_D3)
# body, prolog, epilog call locations of each space
LOCATIONS = {
    T0: (LOC_LOOP, LOC_LOOP_PROLOG, LOC_LOOP_EPILOG),
    KER_ITER_D0: (LOC_D0, LOC_D0_PROLOG, LOC_D0_EPILOG),
    KER_ITER_D1: (LOC_D1, LOC_D1_PROLOG, LOC_D1_EPILOG),
    KER_ITER_D2: (LOC_D2, LOC_D2_PROLOG, LOC_D2_EPILOG),
    KER_ITER_D3: (LOC_D3, LOC_D3_PROLOG, LOC_D3_EPILOG),
}
SUFFIX = {1: "u8", 2: "u16", 4: "u32"}
DTYPES = {1: np.uint8, 2: np.uint16, 4: np.uint32}
M32 = 0xFFFFFFFF
SENTINEL = 0xA5A5A5A5
U = "unsigned int"
# the arguments whose KerArgSpace holds the space of each role (any gives its chunk size)
COUNT_FROM = {"O": ["Out", "Wt", "Bias", "Acc"], "R": ["In", "Wt"], "B": ["In", "Out", "Acc"]}
FILTERED = collections.Counter()  # cases assumed away, by reason
# Largest output lines (columns) along the tiled / the other axis, D space extent, repetitions,
# PrefDiv (small: the C runs on the simulated chip for every example)
LIMITS = dict(tiled=10, cross=7, dim=6, rep=3, div=4)


# ----------------------------------------------------------------------------------------------
# Strategy


@st.composite
def axis(draw, tiled: bool):
    """One axis of the planes: n output items from a window of F, stride S, zero padding pb
    before and pa after (In's PadExec); the input has n_in items of which ``used`` are read.
    As in the SDK's convolution followed by a padded pooling, Out may carry po_b / po_a items
    of padding of its own (its PadTile = PadExec, never computed); In's PadTile then adds S
    items per Out padding item (PadTile = po*S + PadExec). ``rem``: the constraint an input
    with unused items along the tiled axis needs."""
    n = draw(st.integers(1, LIMITS["tiled"] if tiled else LIMITS["cross"]))
    f, s = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    pb, pa = draw(st.integers(0, f - 1)), draw(st.integers(0, f - 1))
    po_b, po_a = (draw(st.integers(0, 2)), draw(st.integers(0, 2))) if draw(st.integers(0, 3)) == 0 else (0, 0)
    padded = (n - 1) * s + f                # padded input items the outputs read
    need = padded - pb                      # input items read (or in the padding after)
    pa = min(pa, need - 1)
    rem = 0
    if pa:
        n_in = used = need - pa
    else:
        trim = draw(st.booleans())
        # unused items past the last one read: declared with UsedW/UsedH (trim), or, along the
        # tiled axis, left in the tiled extent with a remainder constraint (fewer than Out's
        # tiled extent, so that the input:output ratio stays S)
        extra = draw(st.integers(0, 3))
        if tiled and not trim:
            extra = min(extra, n + po_b + po_a - 1)
        n_in = need + extra
        used = need if trim else n_in
        if tiled and extra and not trim:
            rem = draw(st.sampled_from([OBJ_CONSTRAINTS_PAD_REM, OBJ_CONSTRAINTS_DROP_REM]))
    return dict(n=n, f=f, s=s, pb=pb, pa=pa, po_b=po_b, po_a=po_a, n_in=n_in, used=used, rem=rem)


def _order(draw, roles, among):
    return draw(st.permutations([r for r in roles if r in among]))


@st.composite
def cases(draw):
    tiled = draw(st.integers(0, 5)) > 0
    nd = draw(st.sampled_from([1, 1, 2, 2, 2] + ([0] if tiled else [])))
    roles = draw(st.lists(st.sampled_from(["R", "R", "O", "O", "B", "rep"]), min_size=nd, max_size=nd, unique=True))
    if not tiled and "B" not in roles:
        roles[0] = "B"  # without a tiled space, In and Out live in the spaces of a batch
    ids = draw(st.permutations(D_SPACES))
    spaces = {}
    for role, sid in zip(roles, ids):
        # a parametric space no argument traverses would be cut in chunks nothing can see (the
        # calls run once per chunk): the repeated space is a fixed one
        kind = "fixed" if role == "rep" else draw(st.sampled_from(["par", "par", "fixed"]))
        dim = draw(st.integers(1, LIMITS["rep"] if role == "rep" else LIMITS["dim"]))
        # traversed backwards (SPACE_PROP_REVERT) by every argument that has it: same results
        spaces[role] = dict(id=sid, kind=kind, dim=dim, div=draw(st.integers(1, LIMITS["div"])),
                            revert=draw(st.integers(0, 4)) == 0)
    order = draw(st.permutations((["T0"] if tiled else []) + roles))
    if "R" in roles:
        mode = draw(st.sampled_from(["inout", "init"] + (["acc", "acc"] if tiled else [])))
        if mode != "inout":  # the calls at LOC_R need R innermost
            order = [k for k in order if k != "R"] + ["R"]
    else:
        mode = draw(st.sampled_from(["direct", "direct", "inout"]))
    vertical = draw(st.booleans())
    tiled_axis, cross_axis = draw(axis(tiled)), draw(axis(False))
    lines, cols = (cross_axis, tiled_axis) if vertical else (tiled_axis, cross_axis)
    has_wt = bool({"O", "R"} & set(roles)) and draw(st.integers(0, 4)) > 0
    has_bias = "O" in roles and draw(st.booleans())
    args = ["In", "Out"] + (["Wt"] if has_wt else []) + (["Bias"] if has_bias else []) + \
        (["Acc"] if mode == "acc" else [])
    l3_homes = [a for a in args if a != "Acc"]
    return dict(
        tiled=tiled, spaces=spaces, order=order, mode=mode, vertical=vertical,
        orient_by=draw(st.sampled_from(["kernel", "kernel", "constraint"])), lines=lines, cols=cols,
        in_item=draw(st.sampled_from([1, 2])), out_item=draw(st.sampled_from([1, 2, 4])),
        in_order=_order(draw, roles, "RB"), out_order=_order(draw, roles, "OB"),
        wt_order=_order(draw, roles, "OR"), acc_order=_order(draw, roles, "OB"),
        has_wt=has_wt, has_bias=has_bias, padded_decl=draw(st.booleans()),
        db={a: draw(st.booleans()) for a in args}, const=draw(st.booleans()),
        buff=[a for a in ("Wt", "Bias") if a in args and draw(st.integers(0, 3)) == 0],
        l3=draw(st.sampled_from([[], [], []] + [[a] for a in l3_homes] + [l3_homes])),
        in_pref=draw(st.sampled_from([0, 0, tiled_axis["s"]])), out_pref=draw(st.sampled_from([0, 0, 0, 2, 3])),
        # which argument's PARTILE_SIZE gives a chunk size (all agree)
        count_from={r: draw(st.sampled_from([a for a in COUNT_FROM[r] if a in args])) for r in roles if r != "rep"},
        shift=draw(st.integers(0, 12)),
        objective=draw(st.sampled_from(["time"] * 6 + ["original", "traffic", "naive", "max_l1"])),
        promote=draw(st.integers(0, 3)) > 0, partial=draw(st.integers(0, 3)) > 0,
        budget_frac=draw(st.one_of(st.just(0.0), st.floats(0.0, 1.0), st.just(1.0))),
        seed=draw(st.integers(0, 2**16)),
    )


# ----------------------------------------------------------------------------------------------
# The model


def _ptr(item: int) -> str:
    return f"Word{SUFFIX[item]} * __restrict__"


def _roles(c, order) -> list:
    return [r for r in order if r in c["spaces"]]


def _arg_space(c, order, tiled: bool):
    sp = c["spaces"]
    ids = [SPACE_PROP(sp[r]["id"], SPACE_PROP_REVERT) if sp[r]["revert"] else sp[r]["id"] for r in order]
    ids += [T0] if tiled else []
    return KerArgSpace(len(ids), *ids)


def _flags(c, name, base):
    l3 = O_L2DB if name in c["l3"] else 0  # homed in L3, staged through L2
    if name in c["buff"]:  # loaded once, whole (a read-once buffer bound to a C argument)
        return base | O_BUFF | l3
    return base | (O_DB if c["db"][name] else 0) | l3


def _orient_cons(c):
    """Per-argument orientation constraint of the tiled arguments (when not the kernel's)."""
    if c["orient_by"] != "constraint":
        return 0
    return OBJ_CONSTRAINTS_TILE_VER if c["vertical"] else OBJ_CONSTRAINTS_TILE_HOR


def _kernel_orientation(c):
    if c["orient_by"] == "constraint":  # the arguments say otherwise
        return TILE_HOR if c["vertical"] else TILE_VER
    return TILE_VER if c["vertical"] else TILE_HOR


def _stride(c, arg, order, role):
    """Plane stride (items for Wt) of ``role`` in the box of ``arg`` (order: its D roles)."""
    order = _roles(c, order)
    if arg not in c["db"] or role not in order:  # an absent argument, a space it does not have
        return Imm(0)
    if role == order[-1]:
        return Imm(1)
    inner = order[-1]
    return K_ArgPar(arg, KER_ARG_LOADEDPARTILE_SIZE, c["spaces"][inner]["id"])


def _count(c, role):
    if role not in c["spaces"]:
        return Imm(1)
    return K_ArgPar(c["count_from"][role], KER_ARG_PARTILE_SIZE, c["spaces"][role]["id"])


def _out_arg(name, space, obj_type, w, h, pad, item, cons, pref, carg):
    """Out or the accumulator, with its own padding (KerArgP) if any."""
    if any(pad):
        return KerArgP(name, space, obj_type, w, h, w, h, pad, pad, item, 0, cons, pref, carg)
    return KerArg(name, space, obj_type, w, h, item, 0, cons, pref, carg)


def declare(c, budget):
    si, so = SUFFIX[c["in_item"]], SUFFIX[c["out_item"]]
    mode, sp = c["mode"], c["spaces"]
    SetL1MemorySize(budget)
    SetSymbolDynamics()
    SetUsedFilesNames(0, 1, "SpaceKernels.h")
    SetGeneratedFilesNames("SpaceGen.c", "SpaceGen.h")
    SetTilingObjective(c["objective"])
    if not c["promote"]:
        AT_SetKernelCtrl(AT_KERNEL_BUFFER_PROMOTE, AT_OPT_OFF)
    if not c["partial"]:
        AT_SetKernelCtrl(AT_KERNEL_PARTIAL_BUFFER_PROMOTE, AT_OPT_OFF)
    win_out = "u32" if mode == "acc" else so
    for s in sorted({win_out, so}):
        t = _ptr({"u8": 1, "u16": 2, "u32": 4}[s])
        LibKernel(f"KerWin_{si}_{s}", CALL_PARALLEL, CArgs(
            TCArg(_ptr(c["in_item"]), "In"), TCArg(U, "W"), TCArg(U, "H"), TCArg("v4s", "Pad"), TCArg(U, "InSR"),
            TCArg(U, "InSB"), TCArg(t, "Out"), TCArg(U, "Wo"), TCArg(U, "Ho"), TCArg(U, "OutSO"), TCArg(U, "OutSB"),
            TCArg(_ptr(4), "Wt"), TCArg(U, "WtSO"), TCArg(U, "WtSR"), TCArg(_ptr(4), "Bias"), TCArg(U, "AddBias"),
            TCArg(U, "NB"), TCArg(U, "NO"), TCArg(U, "NR"), TCArg(U, "Fx"), TCArg(U, "Fy"), TCArg(U, "Sx"),
            TCArg(U, "Sy"), TCArg(U, "Accumulate")),
            f"KerWin_{si}_{s}_T", Cost="((NB*NO*Ho + ncores - 1)/ncores)*Wo*(NR*(3*Fx*Fy + 4) + 6) + 20")
        LibKernel(f"KerSet_{s}", CALL_PARALLEL, CArgs(
            TCArg(t, "Out"), TCArg(U, "W"), TCArg(U, "H"), TCArg(U, "OutSO"), TCArg(U, "OutSB"), TCArg(U, "NO"),
            TCArg(U, "NB"), TCArg(_ptr(4), "Bias")), f"KerSet_{s}_T", Cost="((NB*NO*W*H + ncores - 1)/ncores)*2 + 12")
    LibKernel(f"KerNarrow_{so}", CALL_PARALLEL, CArgs(
        TCArg(_ptr(4), "Acc"), TCArg(U, "AccSO"), TCArg(U, "AccSB"), TCArg(_ptr(c["out_item"]), "Out"),
        TCArg(U, "OutSO"), TCArg(U, "OutSB"), TCArg(U, "W"), TCArg(U, "H"), TCArg(U, "NO"), TCArg(U, "NB"),
        TCArg(U, "Shift")), f"KerNarrow_{so}_T", Cost="((NB*NO*W*H + ncores - 1)/ncores)*3 + 12")

    # Iteration space
    iters = []
    for k in c["order"]:
        if k == "T0":
            iters.append(IterTiledSpace(T0))
        elif sp[k]["kind"] == "par":
            iters.append(IterParSpace(sp[k]["id"], sp[k]["dim"], sp[k]["div"]))
        else:
            iters.append(IterFixedSpace(sp[k]["id"], sp[k]["dim"]))
    inner = c["order"][-1]
    body = LOCATIONS[T0 if inner == "T0" else sp[inner]["id"]][0]

    # Kernel arguments
    lines, cols, tiled = c["lines"], c["cols"], c["tiled"]
    t_axis = cols if c["vertical"] else lines
    ocons = _orient_cons(c) if tiled else 0
    const = O_CONST if c["const"] else 0
    in_type = _flags(c, "In", O_IN)
    in_cons = ocons | t_axis["rem"]
    in_space = _arg_space(c, c["in_order"], tiled)
    overlap = t_axis["f"] - t_axis["s"]
    pad_exec = (cols["pb"], cols["pa"], lines["pb"], lines["pa"])
    pad_out = (cols["po_b"], cols["po_a"], lines["po_b"], lines["po_a"])
    pad_tile = tuple(po * a["s"] + p for po, p, a in zip(pad_out, pad_exec, (cols, cols, lines, lines)))
    if c["padded_decl"] or any(pad_tile) or lines["used"] < lines["n_in"] or cols["used"] < cols["n_in"]:
        kin = KerArgP("In", in_space, in_type, cols["n_in"], lines["n_in"], cols["used"], lines["used"], pad_tile,
                      pad_exec, c["in_item"], overlap, in_cons, c["in_pref"], "In")
    else:
        kin = KerArg("In", in_space, in_type, cols["n_in"], lines["n_in"], c["in_item"], overlap, in_cons,
                     c["in_pref"], "In")
    out_type = _flags(c, "Out", O_OUT | (O_IN if mode == "inout" else 0))
    kargs = [kin, _out_arg("Out", _arg_space(c, c["out_order"], tiled), out_type, cols["n"], lines["n"], pad_out,
                           c["out_item"], ocons, c["out_pref"], "Out")]
    cargs = [TCArg(_ptr(c["in_item"]), "In"), TCArg(_ptr(c["out_item"]), "Out")]
    if c["has_wt"]:
        kargs.append(KerArg("Wt", _arg_space(c, c["wt_order"], False), _flags(c, "Wt", O_IN | const), 1, 1, 4, 0, 0,
                            0, "Wt"))
        cargs.append(TCArg(_ptr(4), "Wt"))
    if c["has_bias"]:
        kargs.append(KerArg("Bias", _arg_space(c, ["O"], False), _flags(c, "Bias", O_IN | const), 1, 1, 4, 0, 0, 0,
                            "Bias"))
        cargs.append(TCArg(_ptr(4), "Bias"))
    if mode == "acc":
        kargs.append(_out_arg("Acc", _arg_space(c, c["acc_order"], True), _flags(c, "Acc", O_BUFF | O_ONETILE),
                              cols["n"], lines["n"], pad_out, 4, ocons, 0, ""))

    # Calls
    target = "Acc" if mode == "acc" else "Out"
    target_order = c["acc_order"] if mode == "acc" else c["out_order"]
    wt = K_Arg("Wt", KER_ARG_TILE) if c["has_wt"] else Imm(0)
    bias = K_Arg("Bias", KER_ARG_TILE) if c["has_bias"] else Imm(0)
    if mode == "direct":
        add_bias, accumulate = Imm(1), 0
    elif mode == "inout":
        add_bias = K_ArgPred("In", KER_ARG_TILEFIRST, sp["R"]["id"]) if "R" in sp else Imm(1)
        accumulate = 1
    else:
        add_bias, accumulate = Imm(0), 1
    win = Call(f"KerWin_{si}_{win_out}", body, Bindings(
        K_Arg("In", KER_ARG_TILE), K_Arg("In", KER_ARG_TILE_W), K_Arg("In", KER_ARG_TILE_H),
        K_Arg("In", KER_ARG_TILE_PAD), _stride(c, "In", c["in_order"], "R"), _stride(c, "In", c["in_order"], "B"),
        K_Arg(target, KER_ARG_TILE), K_Arg(target, KER_ARG_TILE_W), K_Arg(target, KER_ARG_TILE_H),
        _stride(c, target, target_order, "O"), _stride(c, target, target_order, "B"),
        wt, _stride(c, "Wt", c["wt_order"], "O"), _stride(c, "Wt", c["wt_order"], "R"),
        bias, add_bias, _count(c, "B"), _count(c, "O"), _count(c, "R"),
        Imm(cols["f"]), Imm(lines["f"]), Imm(cols["s"]), Imm(lines["s"]), Imm(accumulate)))
    calls = [win]
    if mode in ("init", "acc"):
        _, prolog, epilog = LOCATIONS[sp["R"]["id"]]
        calls.insert(0, Call(f"KerSet_{win_out}", prolog, Bindings(
            K_Arg(target, KER_ARG_TILE), K_Arg(target, KER_ARG_TILE_W), K_Arg(target, KER_ARG_TILE_H),
            _stride(c, target, target_order, "O"), _stride(c, target, target_order, "B"),
            _count(c, "O"), _count(c, "B"), bias)))
    if mode == "acc":
        calls.append(Call(f"KerNarrow_{so}", epilog, Bindings(
            K_Arg("Acc", KER_ARG_TILE), _stride(c, "Acc", c["acc_order"], "O"), _stride(c, "Acc", c["acc_order"], "B"),
            K_Arg("Out", KER_ARG_TILE), _stride(c, "Out", c["out_order"], "O"), _stride(c, "Out", c["out_order"], "B"),
            K_Arg("Out", KER_ARG_TILE_W), K_Arg("Out", KER_ARG_TILE_H), _count(c, "O"), _count(c, "B"),
            Imm(c["shift"]))))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return UserKernel(NAME, KernelIterSpace(len(iters), *iters), _kernel_orientation(c), CArgs(*cargs),
                          Calls(*calls), KerArgs(*kargs))


# ----------------------------------------------------------------------------------------------
# The reference (numpy only)


def _dim(c, role):
    return c["spaces"][role]["dim"] if role in c["spaces"] else 1


def _layout_shape(c, order, plane=()):
    return tuple(_dim(c, r) for r in _roles(c, order)) + tuple(plane)


def _to_logical(c, a, order, want):
    """Array in layout ``order`` (its D roles, then a plane) -> axes ``want`` (absent: size 1)."""
    have = _roles(c, order)
    for r in want:
        if r not in have:
            a, have = a[np.newaxis], [r] + have
    perm = [have.index(r) for r in want] + list(range(len(want), a.ndim))
    return a.transpose(perm)


def _from_logical(c, a, order, want):
    """Inverse of _to_logical."""
    have = _roles(c, order)
    a = a.transpose([want.index(r) for r in have] + [want.index(r) for r in want if r not in have]
                    + list(range(len(want), a.ndim)))
    return a.reshape(_layout_shape(c, order, a.shape[len(want):]))


def window_sums(x, lines, cols):
    """x: (..., H, W) -> (..., n lines, n cols): sums of the zero-padded F windows."""
    h, w = x.shape[-2:]
    ph, pw = max(lines["pb"] + h, (lines["n"] - 1) * lines["s"] + lines["f"]), \
        max(cols["pb"] + w, (cols["n"] - 1) * cols["s"] + cols["f"])
    xp = np.zeros(x.shape[:-2] + (ph, pw), dtype=np.uint64)
    xp[..., lines["pb"]:lines["pb"] + h, cols["pb"]:cols["pb"] + w] = x
    out = np.zeros(x.shape[:-2] + (lines["n"], cols["n"]), dtype=np.uint64)
    for ky in range(lines["f"]):
        for kx in range(cols["f"]):
            out += xp[..., ky:ky + (lines["n"] - 1) * lines["s"] + 1:lines["s"],
                      kx:kx + (cols["n"] - 1) * cols["s"] + 1:cols["s"]]
    return out


def reference(c, args):
    """Expected Out (in its layout) from the C arguments."""
    x = _to_logical(c, args["In"].astype(np.uint64), c["in_order"], ["B", "R"])       # b r H W
    s = window_sums(x, c["lines"], c["cols"])                                          # b r Ho Wo
    no, nr = _dim(c, "O"), _dim(c, "R")
    if c["has_wt"]:
        wt = _to_logical(c, args["Wt"].astype(np.uint64), c["wt_order"], ["O", "R"])   # o r
    else:
        wt = np.ones((no, nr), dtype=np.uint64)
    total = np.einsum("or,brhw->bohw", wt, s) & M32
    if c["has_bias"]:
        total = (total + args["Bias"].astype(np.uint64)[None, :, None, None]) & M32
    mask = (1 << (8 * c["out_item"])) - 1
    if c["mode"] == "acc":
        out = (total >> c["shift"]) & mask
    elif c["mode"] == "inout":
        out0 = _to_logical(c, args["Out"].astype(np.uint64), c["out_order"], ["B", "O"])
        out = (out0 + _dim(c, "rep") * total) & mask
    else:
        out = total & mask
    return _from_logical(c, out, c["out_order"], ["B", "O"]).astype(DTYPES[c["out_item"]])


def make_args(c, rng):
    lines, cols = c["lines"], c["cols"]
    dt_in, dt_out = DTYPES[c["in_item"]], DTYPES[c["out_item"]]
    args = {"In": rng.integers(0, np.iinfo(dt_in).max, _layout_shape(c, c["in_order"], (lines["n_in"], cols["n_in"])),
                               dtype=dt_in, endpoint=True)}
    out_shape = _layout_shape(c, c["out_order"], (lines["n"], cols["n"]))
    if c["mode"] == "inout":
        args["Out"] = rng.integers(0, np.iinfo(dt_out).max, out_shape, dtype=dt_out, endpoint=True)
    else:
        args["Out"] = np.full(out_shape, SENTINEL & np.iinfo(dt_out).max, dtype=dt_out)
    if c["has_wt"]:
        args["Wt"] = rng.integers(0, M32, _layout_shape(c, c["wt_order"]), dtype=np.uint32, endpoint=True)
    if c["has_bias"]:
        args["Bias"] = rng.integers(0, M32, (_dim(c, "O"),), dtype=np.uint32, endpoint=True)
    return args


# ----------------------------------------------------------------------------------------------
# The test


def _budget(c):
    """L1 budget from the smallest tiling's footprint (barely fits) to all promoted (fits
    everything), or None when no tile size meets the tile constraints."""
    with Model(PLATFORM) as m:
        declare(c, PLATFORM.l1_size)
        low, high = footprint_range(m.kernels[NAME])
    if low is None:
        return None
    return min(PLATFORM.l1_size, max(low, int(low + c["budget_frac"] * (high - low))))


def _describe(c, t):
    sp = " > ".join(k if k == "T0" else f"{k}:{c['spaces'][k]['kind']}{c['spaces'][k]['dim']}" for k in c["order"])
    return f"[{sp}] mode {c['mode']}, objective {c['objective']}: {t.describe()}"


def check_case(c, gen_dir, sanitize=False, drawn=True):
    """Generate, build and run one drawn kernel (``drawn``: inside a hypothesis test, which
    records what it covers); check it against numpy and the prediction."""
    budget = _budget(c)
    if budget is None:
        # only PreferedTileSize can leave a tiled space without a legal tile size
        assert c["out_pref"] or c["in_pref"]
        FILTERED["no tile size meets the tile constraints"] += 1
        event("filtered: no tile size meets the tile constraints")
        assume(False)
    with Model(PLATFORM) as m:
        tiling = declare(c, budget)  # a TilingError at a budget >= the smallest footprint fails
        assert tiling is not None
        verify(tiling.schedule, tiling)  # also run by the tiler: an emitted schedule passes it
        files = generate(m)
    if drawn:
        event(f"mode {c['mode']}, {len(c['order'])} space(s), " + ("promoted" if tiling.promoted else
              "partial promotion" if tiling.partial else "several tiles" if tiling.count(T0) > 1 else
              "several iterations" if tiling.iterations > 1 else "one iteration"))
    write_files(files, str(gen_dir))
    program = host_harness.build(gen_dir, sources=[KERNELS / "SpaceKernels.c"], include_dirs=[KERNELS],
                                 platform=PLATFORM, sanitize=sanitize)
    args = make_args(c, np.random.default_rng(c["seed"]))
    expected = reference(c, args)
    counters = program.call(NAME, **args)
    what = _describe(c, tiling)
    np.testing.assert_array_equal(args["Out"], expected, err_msg=what)
    assert counters["peak_l1"] == tiling.l1_bytes <= budget, what
    assert counters["cycles"] == tiling.predicted.cycles, what
    assert counters["l2_to_l1"] == tiling.traffic_in and counters["l1_to_l2"] == tiling.traffic_out, what
    assert counters["l3_to_l2"] == tiling.traffic_l3_in and counters["l2_to_l3"] == tiling.traffic_l3_out, what


SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@settings(max_examples=50, **SETTINGS)
@given(c=cases())
def test_random_spaces_match_numpy_on_the_simulated_chip(c, tmp_path_factory):
    check_case(c, tmp_path_factory.mktemp("spaces"))


@pytest.mark.slow
@settings(max_examples=6, **SETTINGS)
@given(c=cases())
def test_random_spaces_under_sanitizers(c, tmp_path_factory):
    """The same under AddressSanitizer and UBSan (basic kernels reading out of their tiles,
    misaligned accesses, overflows in the generated C)."""
    check_case(c, tmp_path_factory.mktemp("spaces_san"), sanitize=True)


def test_reference_of_a_small_case_by_hand():
    """The numpy reference itself, on a case small enough to compute by hand: one plane of 4
    lines, a 3-line window of stride 1 with one line of padding on each side."""
    c = dict(spaces={}, in_order=[], out_order=[], wt_order=[], mode="direct", has_wt=False, has_bias=False,
             out_item=4, lines=dict(n=4, f=3, s=1, pb=1, pa=1), cols=dict(n=1, f=1, s=1, pb=0, pa=0))
    x = np.array([[1], [2], [3], [4]], dtype=np.uint8)
    np.testing.assert_array_equal(reference(c, {"In": x}), [[3], [6], [9], [7]])


@pytest.mark.parametrize("mode", ["inout", "acc"])
def test_reference_reduces_over_r_with_weights_and_bias(mode):
    """Two output planes from three input planes (1x1 windows): Out[o] = sum_r Wt[o][r]*In[r] +
    Bias[o], repeated twice into an in-out Out, or shifted right by 1 from the accumulator."""
    c = dict(spaces={"O": dict(dim=2), "R": dict(dim=3), "rep": dict(dim=2)}, in_order=["R"], out_order=["O"],
             wt_order=["R", "O"], mode=mode, has_wt=True, has_bias=True, out_item=2, shift=1,
             lines=dict(n=1, f=1, s=1, pb=0, pa=0), cols=dict(n=2, f=1, s=1, pb=0, pa=0))
    x = np.array([[[1, 2]], [[3, 4]], [[5, 6]]], dtype=np.uint16)        # r, 1, 2
    wt = np.array([[1, 10], [2, 20], [3, 30]], dtype=np.uint32)            # r, o
    bias = np.array([100, 1000], dtype=np.uint32)
    out0 = np.array([[[7, 7]], [[9, 9]]], dtype=np.uint16)
    o0 = np.array([1 + 6 + 15, 2 + 8 + 18]) + 100
    o1 = np.array([10 + 60 + 150, 20 + 80 + 180]) + 1000
    got = reference(c, {"In": x, "Wt": wt, "Bias": bias, "Out": out0})
    want = np.array([[o0], [o1]]) >> 1 if mode == "acc" else np.array([[7 + 2 * o0], [9 + 2 * o1]])
    np.testing.assert_array_equal(got, want)


def test_l3_in_out_output_visited_again(tmp_path):
    """Out += In over a reduction space R outside the tiled space, Out (in-out, homed in L3)
    without R: each tile of Out is visited again at the next R index."""
    def axis_(n):
        return dict(n=n, f=1, s=1, pb=0, pa=0, po_b=0, po_a=0, n_in=n, used=n, rem=0)
    c = dict(tiled=True, spaces={"R": dict(id=KER_ITER_D0, kind="par", dim=2, div=1, revert=False)},
             order=["R", "T0"], mode="inout", vertical=False, orient_by="kernel", lines=axis_(4), cols=axis_(3),
             in_item=1, out_item=1, in_order=["R"], out_order=[], wt_order=["R"], acc_order=[], has_wt=False,
             has_bias=False, padded_decl=False, db={"In": True, "Out": True}, const=False, buff=[], l3=["Out"],
             in_pref=0, out_pref=0, count_from={"R": "In"}, shift=0, objective="time", promote=False,
             partial=False, budget_frac=0.0, seed=0)
    with Model(PLATFORM):
        t = declare(c, _budget(c))
    # its tiles come back at every R index: the L3 round trip of one visit would race the next,
    # so Out lives whole in L2 for the call (read from L3 first, written back last)
    assert t.arg("Out").whole_stage and t.count(T0) > 1
    check_case(c, tmp_path, drawn=False)
