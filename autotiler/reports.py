"""Reports: what GenerateTilingCode() returns and prints, per kernel and for the whole model."""

from __future__ import annotations

from dataclasses import dataclass, field

from .bounds import compulsory as compulsory_traffic
from .bounds import kernel_figures
from .codegen.files import tiling_json
from .tiler.tiling import KernelTiling


@dataclass(frozen=True)
class KernelReport:
    name: str
    tiling: KernelTiling
    compulsory_in: int
    compulsory_out: int
    extra: dict = field(default_factory=dict)

    @property
    def ntiles(self) -> int:
        return self.tiling.ntiles

    @property
    def l1_bytes(self) -> int:
        return self.tiling.l1_bytes

    @property
    def traffic(self) -> int:
        return self.tiling.traffic

    @property
    def traffic_ratio(self) -> float:
        comp = self.compulsory_in + self.compulsory_out
        return self.traffic / comp if comp else 1.0

    def summary(self) -> str:
        text = (f"{self.name}: {self.tiling.describe()}; traffic {self.traffic} B "
                f"({self.traffic_ratio:.2f}x compulsory)")
        if "predicted_cycles" in self.extra:
            e = self.extra
            text += (f"; predicted {e['predicted_cycles']} cycles "
                     f"({e['time_vs_roofline']:.2f}x roofline {e['roofline_cycles']}, {e['bound']}-bound)")
        return text

    def to_dict(self) -> dict:
        return {"name": self.name, **tiling_json(self.tiling), "compulsory_in": self.compulsory_in,
                "compulsory_out": self.compulsory_out, **self.extra}


@dataclass(frozen=True)
class GenerationReport:
    kernels: tuple
    groups: tuple
    files: tuple
    l1_budget: int

    @classmethod
    def from_model(cls, model, files) -> GenerationReport:
        kernels = tuple(KernelReport(n, t, *compulsory_traffic(t), extra=_extra(model, t))
                        for n, t in model.tilings.items())
        return cls(kernels, tuple(model.groups), tuple(files), model.l1_budget)

    def kernel(self, name: str) -> KernelReport:
        return next(k for k in self.kernels if k.name == name)

    def __getitem__(self, name: str) -> KernelReport:
        return self.kernel(name)

    def format(self) -> str:
        lines = [f"autotiler: {len(self.kernels)} user kernel(s), {len(self.groups)} group(s), "
                 f"L1 budget {self.l1_budget} B"]
        lines += [f"  {k.summary()}" for k in self.kernels]
        lines += [f"  wrote {f}" for f in self.files]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()

    def to_dict(self) -> dict:
        return {"l1_budget": self.l1_budget, "kernels": [k.to_dict() for k in self.kernels],
                "groups": list(self.groups), "files": list(self.files)}


def _extra(model, t: KernelTiling) -> dict:
    """Cost-model figures: predicted cycles, bounds and ratios (see autotiler.bounds)."""
    return kernel_figures(t, model.platform)
