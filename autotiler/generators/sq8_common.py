"""What every SQ8 generator decides first: which requantisation and which layout.

* ``Scale_DataSize`` 1 (the default): the original's. ``unsigned char Scale[]``, ``signed char
  ScaleN[]`` per channel, the 1-byte Infos of :mod:`.sq8_original`, CHW feature maps.
* ``Scale_DataSize`` 4: TensorFlow Lite Micro's, bit for bit. ``int Scale[]`` (Q31 multipliers),
  ``signed char ScaleN[]`` (shifts), the int32-word Infos of :mod:`.sq8_infos`, HWC feature maps
  (TFLite's NHWC, one image).

Generators with a ``Scale_DataSize`` argument read it; the others (the original's activation,
pooling, softmax, element-wise generators have none) read the ``CNN_GenControl_T`` field
``SCALE_DATASIZE`` (ours). ``HWC`` may restate the layout; the other layout is refused as not
supported yet.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .cnn_checks import Checker
from .cnn_ctrl import DEFAULT, GenControl, gen_control


class Requant(enum.IntEnum):
    """The requantisation, by its Scale_DataSize."""

    ORIGINAL = 1
    TFLM = 4


@dataclass(frozen=True)
class Sq8Setup:
    """A generator's checker, control fields and requantisation."""

    chk: Checker
    ctrl: GenControl
    requant: Requant

    @property
    def hwc(self) -> bool:
        return self.requant == Requant.TFLM


def sq8_setup(generator: str, where: str, Name, Ctrl, Scale_DataSize=None) -> Sq8Setup:
    """Check ``Name`` and ``Ctrl``, pick the requantisation (``Scale_DataSize``, or the Ctrl field
    ``SCALE_DATASIZE`` for generators without that argument) and check the layout."""
    chk = Checker(generator, Name, where)
    if not isinstance(Name, str) or not Name.isidentifier():
        chk.fail(f"the kernel name must be a C identifier, got {Name!r}", "e.g. \"Conv0\"")
    ctrl = gen_control(Ctrl, generator, Name, where, sq8=True)
    if Scale_DataSize is None:
        size = 1 if ctrl.scale_datasize == DEFAULT else ctrl.scale_datasize
    else:
        size = chk.integer(Scale_DataSize, "Scale_DataSize")
        if size not in (1, 4):
            chk.fail(f"Scale_DataSize {size} is not supported: 1 selects the original's requantisation "
                     "(unsigned char Scale, ScaleN), 4 TensorFlow Lite Micro's (int32 multiplier, shift)",
                     "use 1 or 4")
        if ctrl.scale_datasize not in (DEFAULT, size):
            chk.fail(f"Scale_DataSize {size} contradicts the Ctrl field SCALE_DATASIZE {ctrl.scale_datasize}",
                     "set them alike, or leave SCALE_DATASIZE unset")
    requant = Requant(size)
    layout = {Requant.ORIGINAL: 0, Requant.TFLM: 1}[requant]
    if ctrl.hwc not in (DEFAULT, layout):
        asked = "HWC" if ctrl.hwc == 1 else "CHW"
        chk.fail(f"{asked} feature maps with Scale_DataSize {size} are not supported yet: the original's "
                 "requantisation (1) runs on CHW, TensorFlow Lite Micro's (4) on HWC",
                 f"leave HWC unset, or use Scale_DataSize {4 if ctrl.hwc == 1 else 1}")
    return Sq8Setup(chk, ctrl, requant)
