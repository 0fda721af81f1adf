"""External RAM devices as generated code names them (macro family, device symbol), and the one
a model's L3-homed arguments execute from (``AT_GRAPH_PREF_L3_EXEC``). Data: the tiler's naming,
the graph planner and codegen read it."""

from __future__ import annotations

from dataclasses import dataclass

from ..constants import AT_GraphCtrl_T, AT_MemLocation_T


@dataclass(frozen=True)
class L3Device:
    """An external RAM as generated code names it: macro family and device symbol."""

    family: str     # AT_<family>_CL_COPY, ...
    symbol: str     # the AT_<family>_T the application opens


# Where L3-homed (O_L2DB) user-kernel arguments execute from: AT_GRAPH_PREF_L3_EXEC.
L3_DEVICES = {
    AT_MemLocation_T.AT_MEM_L3_HRAM: L3Device("HYPERRAM", "HyperRam"),
    AT_MemLocation_T.AT_MEM_L3_QSPIRAM: L3Device("QSPIRAM", "QspiRam"),
    AT_MemLocation_T.AT_MEM_L3_OSPIRAM: L3Device("OSPIRAM", "OspiRam"),
    AT_MemLocation_T.AT_MEM_L3_DEFAULTRAM: L3Device("DEFAULTRAM", "DefaultRam"),
}
AT_MEM_L3_DEFAULT_EXEC = AT_MemLocation_T.AT_MEM_L3_HRAM  # the original's default


def l3_device(model) -> L3Device:
    return L3_DEVICES[model.graph_ctrl.get(AT_GraphCtrl_T.AT_GRAPH_PREF_L3_EXEC, AT_MEM_L3_DEFAULT_EXEC)]


__all__ = ["L3Device", "L3_DEVICES", "AT_MEM_L3_DEFAULT_EXEC", "l3_device"]
