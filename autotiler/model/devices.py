"""External RAM devices as generated code names them (macro family, device symbol), and the one
a model's L3-homed arguments execute from (``AT_GRAPH_PREF_L3_EXEC``). Data: the tiler's naming,
the graph planner and codegen read it."""

from __future__ import annotations

from dataclasses import dataclass

from ..constants import AT_GraphCtrl_T, AT_MemLocation_T


@dataclass(frozen=True)
class L3Device:
    """An external memory as generated code names it: macro family, device symbol, and the kind
    of micro-DMA numbers its copies take (``platform.udma[kind]``: "ram", "flash", "mram")."""

    family: str     # AT_<family>_CL_COPY, ...
    symbol: str     # the AT_<family>_T the application opens
    kind: str = "ram"


# Where L3-homed (O_L2DB) user-kernel arguments execute from: AT_GRAPH_PREF_L3_EXEC.
L3_DEVICES = {
    AT_MemLocation_T.AT_MEM_L3_HRAM: L3Device("HYPERRAM", "HyperRam"),
    AT_MemLocation_T.AT_MEM_L3_QSPIRAM: L3Device("QSPIRAM", "QspiRam"),
    AT_MemLocation_T.AT_MEM_L3_OSPIRAM: L3Device("OSPIRAM", "OspiRam"),
    AT_MemLocation_T.AT_MEM_L3_DEFAULTRAM: L3Device("DEFAULTRAM", "DefaultRam"),
}
AT_MEM_L3_DEFAULT_EXEC = AT_MemLocation_T.AT_MEM_L3_HRAM  # the original's default


# The flashes graph constants live in (their file-system macro family, device symbol), as
# generated code names them.
FLASH_DEVICES = {
    AT_MemLocation_T.AT_MEM_L3_HFLASH: ("HYPERFLASH_FS", "HyperFlash"),
    AT_MemLocation_T.AT_MEM_L3_QSPIFLASH: ("QSPIFLASH_FS", "QspiFlash"),
    AT_MemLocation_T.AT_MEM_L3_OSPIFLASH: ("OSPIFLASH_FS", "OspiFlash"),
    AT_MemLocation_T.AT_MEM_L3_MRAMFLASH: ("EMRAMFLASH_FS", "EmramFlash"),
    AT_MemLocation_T.AT_MEM_L3_DEFAULTFLASH: ("DEFAULTFLASH_FS", "DefaultFlash"),
}
FLASH_LOCATIONS = tuple(FLASH_DEVICES)


def device_engine(platform, device) -> object:
    """The micro-DMA numbers of a copy from ``device`` (an L3Device; None: the L3 RAM):
    ``platform.udma[kind]``, the off-chip flash's for MRAM on a platform without an MRAM engine
    (the simulator configures the same)."""
    kind = device.kind if device is not None else "ram"
    return platform.udma.get(kind) or platform.udma["flash"]


def flash_engine(platform, loc: AT_MemLocation_T):
    """The micro-DMA numbers of a copy from flash ``loc`` (:func:`device_engine`)."""
    return device_engine(platform, flash_device(loc))


def flash_device(loc: AT_MemLocation_T) -> L3Device:
    """A flash as an L3 device (its file-system family): where AT_GRAPH_CONST_EXEC_FROM_FLASH
    arguments are read from."""
    family, symbol = FLASH_DEVICES[loc]
    return L3Device(family, symbol, "mram" if loc == AT_MemLocation_T.AT_MEM_L3_MRAMFLASH else "flash")


def l3_device(model) -> L3Device:
    """AT_GRAPH_PREF_L3_EXEC's RAM; unset, the default one, unless SetMemoryDeviceInfos declares
    other L3 RAMs only: then the first of those (the chip has what the model declares)."""
    loc = model.graph_ctrl.get(AT_GraphCtrl_T.AT_GRAPH_PREF_L3_EXEC)
    if loc is None:
        declared = [d for d in L3_DEVICES if d in model.memory_devices]
        loc = declared[0] if declared and AT_MEM_L3_DEFAULT_EXEC not in declared else AT_MEM_L3_DEFAULT_EXEC
    return L3_DEVICES[loc]


def declared_flash(model, loc: AT_MemLocation_T, preferred: AT_MemLocation_T) -> AT_MemLocation_T:
    """The flash a constant homed in ``loc`` lives in: ``loc`` itself, unless SetMemoryDeviceInfos
    declares flashes and not this one; then ``preferred`` (AT_GRAPH_PREF_L3_HOME) if declared,
    else the first declared (the guide's MNIST homes its constants in AT_MEM_L3_HFLASH and declares
    AT_MEM_L3_DEFAULTFLASH only: its generated code reads them from DefaultFlash)."""
    declared = [d for d in FLASH_DEVICES if d in model.memory_devices]
    if not declared or loc in declared:
        return loc
    return preferred if preferred in declared else declared[0]


__all__ = ["L3Device", "L3_DEVICES", "AT_MEM_L3_DEFAULT_EXEC", "l3_device", "FLASH_DEVICES", "FLASH_LOCATIONS",
           "flash_engine", "flash_device", "declared_flash", "device_engine"]
