"""The CNN generators' control descriptor: ``CNN_GenControl_T``, ``CNN_InitGenCtrl``,
``CNN_SetGenCtrl`` and ``CNN_SetGenCtrlList``, with the original's field names (case
insensitive, as the original) and defaults (-1: the generator chooses).

In C the descriptor is a struct passed by address; here it is a mutable object passed as is::

    Ctrl = CNN_GenControl_T()
    CNN_InitGenCtrl(Ctrl)
    CNN_SetGenCtrl(Ctrl, "PADTYPE", AT_OPT_VAL(PAD_BALANCED_RIGHT))
    CNN_ConvolutionPoolReLU("Conv0", Ctrl, ...)

A generator reads it once, through :func:`gen_control`, into a frozen :class:`GenControl`
(``Ctrl`` 0 or None: every field at its default). Fields the generators do not act on yet are
refused at ``CNN_SetGenCtrl`` with "not supported yet" unless set to their default.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..constants import PadType_T, Tile_Orientation_T
from ..errors import ModelError
from ..model.ir import caller_where

DEFAULT = -1   # the generator chooses


@dataclass(frozen=True)
class GenControl:
    """What a generator reads from a ``CNN_GenControl_T`` (-1: the generator's default)."""

    tile_orientation: int = DEFAULT     # TILE_HOR (0) or TILE_VER (1)
    parallel_features: int = DEFAULT    # 1: output features in parallel (KerPar*), 0: one feature, lines in parallel
    force_dp_conv: int = DEFAULT        # 1: 32-bit accumulation even for KOP_CONV, 0: never
    pad_type: int = DEFAULT             # PAD_LEFT, PAD_RIGHT, PAD_BALANCED_LEFT, PAD_BALANCED_RIGHT
    relun: int = DEFAULT                # KOP_RELUN's N (default 6)
    hwc: int = DEFAULT                  # SQ8 only: 1 HWC feature maps, 0 CHW (default: the requantisation's)
    scale_datasize: int = DEFAULT       # SQ8 only: 1 the original's requantisation, 4 TFLM's (default 1)


# name (upper case) -> (field, allowed values, what the values mean)
_FIELDS = {
    "TILEORIENTATION": ("tile_orientation", (DEFAULT, int(Tile_Orientation_T.TILE_HOR),
                                             int(Tile_Orientation_T.TILE_VER)), "-1, TILE_HOR or TILE_VER"),
    "PARALLELFEATURES": ("parallel_features", (DEFAULT, 0, 1), "-1, 0 (one feature at a time, its lines in "
                         "parallel) or 1 (output features in parallel)"),
    "FORCEDPCONV": ("force_dp_conv", (DEFAULT, 0, 1), "-1, 0 or 1"),
    "PADTYPE": ("pad_type", (DEFAULT, *(int(p) for p in PadType_T)),
                "-1, PAD_LEFT, PAD_RIGHT, PAD_BALANCED_LEFT or PAD_BALANCED_RIGHT"),
    "RELUN": ("relun", None, "-1 or a positive int"),
    "HWC": ("hwc", (DEFAULT, 0, 1), "-1, 0 (CHW) or 1 (HWC)"),
    "SCALE_DATASIZE": ("scale_datasize", (DEFAULT, 1, 4), "-1, 1 (the original's 1-byte Scale/ScaleN "
                       "requantisation) or 4 (TensorFlow Lite Micro's int32 multiplier and shift)"),
}
# Fields only the SQ8 generators read (docs/cnn-sq8.md): the fp/fps generators refuse them set.
SQ8_ONLY = ("hwc", "scale_datasize")
# Fields of the original's descriptor that nothing here acts on: accepted at their default only.
_REFUSED = {
    "USEHWCE": "the GAP8 hardware convolution engine",
    "ENABLEIM2COL": "matrix-multiply (im2col) convolutions",
    "MULBIASSCALAR": "multiplicative biases",
    "INPUT_DATASIZE": "per-call data sizes",
    "OUTPUT_DATASIZE": "per-call data sizes",
    "CUSTOM_ACTIVATION_NAME": "custom activations",
    "EXTRA_ACTIVATION_ARGS": "custom activations",
    "IN_L3": "the descriptor's L3 flags (use the generator's *_InL3 arguments)",
    "FILTER_L3": "the descriptor's L3 flags (use the generator's *_InL3 arguments)",
    "BIAS_L3": "the descriptor's L3 flags (use the generator's *_InL3 arguments)",
    "OUT_L3": "the descriptor's L3 flags (use the generator's *_InL3 arguments)",
}
_REFUSED_DEFAULTS = {"USEHWCE": (DEFAULT, 0), "ENABLEIM2COL": (DEFAULT, 0), "MULBIASSCALAR": (DEFAULT, 0),
                     "INPUT_DATASIZE": (DEFAULT,), "OUTPUT_DATASIZE": (DEFAULT,),
                     "CUSTOM_ACTIVATION_NAME": (None, 0, ""), "EXTRA_ACTIVATION_ARGS": (None, 0),
                     "IN_L3": (DEFAULT, 0), "FILTER_L3": (DEFAULT, 0), "BIAS_L3": (DEFAULT, 0),
                     "OUT_L3": (DEFAULT, 0)}


class CNN_GenControl_T:
    """A CNN generator control descriptor (the C struct); fill it with CNN_InitGenCtrl and
    CNN_SetGenCtrl."""

    def __init__(self) -> None:
        self.values: dict = {}
        self.initialised = False

    def __repr__(self) -> str:
        return f"CNN_GenControl_T({self.values})"


def CNN_InitGenCtrl(Ctrl: CNN_GenControl_T) -> None:
    """Sets every field of ``Ctrl`` to its default (-1: the generator chooses)."""
    if not isinstance(Ctrl, CNN_GenControl_T):
        raise ModelError(f"CNN_InitGenCtrl expects a CNN_GenControl_T, got {type(Ctrl).__name__}",
                         where=caller_where(), hint="Ctrl = CNN_GenControl_T(); CNN_InitGenCtrl(Ctrl)")
    Ctrl.values = {}
    Ctrl.initialised = True


def _set(Ctrl, Name, Val, where: str) -> None:
    if not isinstance(Ctrl, CNN_GenControl_T):
        raise ModelError(f"CNN_SetGenCtrl expects a CNN_GenControl_T, got {type(Ctrl).__name__}", where=where,
                         hint="Ctrl = CNN_GenControl_T(); CNN_InitGenCtrl(Ctrl)")
    if not isinstance(Name, str):
        raise ModelError(f"CNN_SetGenCtrl: the field name must be a string, got {Name!r}", where=where,
                         hint="e.g. CNN_SetGenCtrl(Ctrl, \"PADTYPE\", AT_OPT_VAL(PAD_BALANCED_LEFT))")
    key = Name.upper()
    if key in _REFUSED:
        if Val in _REFUSED_DEFAULTS[key] and not isinstance(Val, bool):
            return
        raise ModelError(f"CNN_SetGenCtrl(Ctrl, \"{Name}\", {Val!r}) is not supported yet: the generators do not "
                         f"generate {_REFUSED[key]}", where=where,
                         hint="remove the call; fields that act: " + ", ".join(_FIELDS))
    if key not in _FIELDS:
        raise ModelError(f"CNN_SetGenCtrl: unknown field \"{Name}\"", where=where,
                         hint="fields: " + ", ".join([*_FIELDS, *_REFUSED]))
    field, allowed, what = _FIELDS[key]
    value = int(Val) if isinstance(Val, int) and not isinstance(Val, bool) else None
    ok = value is not None and (value in allowed if allowed else (value == DEFAULT or value > 0))
    if not ok:
        raise ModelError(f"CNN_SetGenCtrl(Ctrl, \"{Name}\", {Val!r}): the value must be {what}", where=where,
                         hint=f"e.g. CNN_SetGenCtrl(Ctrl, \"{Name}\", AT_OPT_VAL(...))")
    Ctrl.values[field] = value


def CNN_SetGenCtrl(Ctrl: CNN_GenControl_T, Name: str, Val) -> None:
    """Sets field ``Name`` (case insensitive: TileOrientation, ParallelFeatures, ForceDPconv,
    PadType, ReluN) of ``Ctrl`` to ``Val``."""
    _set(Ctrl, Name, Val, caller_where())


def CNN_SetGenCtrlList(Ctrl: CNN_GenControl_T, *NameVals) -> None:
    """``CNN_SetGenCtrl`` for each (Name, Val) pair, up to a Name of 0 (the C list's end)."""
    where = caller_where()
    items = list(NameVals)
    while items and items[0] not in (0, None):
        if len(items) < 2:
            raise ModelError(f"CNN_SetGenCtrlList: field \"{items[0]}\" has no value", where=where,
                             hint="pass Name, Val pairs, ending with 0")
        _set(Ctrl, items[0], items[1], where)
        items = items[2:]


def gen_control(Ctrl, generator: str, name: str, where: str, sq8: bool = False) -> GenControl:
    """The frozen view generator ``generator`` (making user kernel ``name``) reads (``Ctrl`` 0
    or None: the defaults); ``sq8`` False refuses the fields only the SQ8 generators read."""
    if isinstance(Ctrl, int) and not isinstance(Ctrl, bool) and Ctrl == 0 or Ctrl is None:
        return GenControl()
    if not isinstance(Ctrl, CNN_GenControl_T):
        raise ModelError(f"{generator}: Ctrl must be 0 or a CNN_GenControl_T, got {type(Ctrl).__name__}",
                         where=where, kernel=name, hint="Ctrl = CNN_GenControl_T(); CNN_InitGenCtrl(Ctrl)")
    if not Ctrl.initialised:
        raise ModelError(f"{generator}: Ctrl was not initialised", where=where, kernel=name,
                         hint="call CNN_InitGenCtrl(Ctrl) before CNN_SetGenCtrl")
    ctrl = GenControl(**Ctrl.values)
    for field in SQ8_ONLY:
        if not sq8 and getattr(ctrl, field) != DEFAULT:
            key = next(k for k, v in _FIELDS.items() if v[0] == field)
            raise ModelError(f"{generator}: Ctrl field \"{key}\" is read by the SQ8 generators only (this is a "
                             f"16/8-bit fixed-point generator, CHW, power-of-two Q formats)", where=where,
                             kernel=name, hint=f"remove CNN_SetGenCtrl(Ctrl, \"{key}\", ...) for this layer, or "
                             "use the *_SQ8 generator")
    return ctrl


def resolved(value: int, default: int) -> int:
    """A GenControl field with the generator's default for -1."""
    return default if value == DEFAULT else value


__all__ = ["CNN_GenControl_T", "CNN_InitGenCtrl", "CNN_SetGenCtrl", "CNN_SetGenCtrlList", "GenControl",
           "gen_control", "resolved", "DEFAULT"]

