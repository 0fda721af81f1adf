"""The CNN generators' parameter checks: typed errors naming the model line, the generator, the
kernel and the parameter (shared by the fp/fps and the SQ8 generators)."""

from __future__ import annotations

from ..constants import KernelOper_T as K
from ..errors import ModelError
from ..model.session import current_model

SQ8_LOADER = "call LoadCNN_SQ8_Library() before the SQ8 generators"
FP_LOADER = "call LoadCNNLibrary() before the CNN generators"


class Checker:
    """Typed errors naming the model line, the generator, the kernel and the parameter."""

    def __init__(self, generator: str, name, where: str):
        self.generator, self.name, self.where = generator, name, where

    def fail(self, message: str, hint: str):
        raise ModelError(f"{self.generator}: {message}", where=self.where,
                         kernel=self.name if isinstance(self.name, str) else None, hint=hint)

    def integer(self, value, param: str, minimum: int | None = None, maximum: int | None = None, what: str = "",
                hint: str = "") -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(f"{param}{what} must be an integer, got {value!r}", hint or "pass a plain int")
        value = int(value)
        if minimum is not None and value < minimum:
            self.fail(f"{param}{what} must be at least {minimum}, got {value}", hint or f"use {minimum} or more")
        if maximum is not None and value > maximum:
            self.fail(f"{param}{what} must be at most {maximum}, got {value}", hint or f"use {maximum} or less")
        return value

    def flag(self, value, param: str) -> int:
        return self.integer(value, param, 0, 1, hint="0 (in L2, no padding) or 1")

    def data_size(self, value, param: str) -> int:
        size = self.integer(value, param)
        if size not in (1, 2):
            self.fail(f"{param} {size} is not supported: the CNN kernels take 1-byte (fps) or 2-byte (fp) data",
                      "use 1 (signed char, Q7 container) or 2 (short int, Q15 container)")
        return size

    def oper(self, value, param: str, allowed: tuple, what: str) -> K:
        """A KernelOper_T given as a member, its value or its name."""
        oper = None
        if isinstance(value, str):
            oper = K.__members__.get(value)
        elif isinstance(value, int) and not isinstance(value, bool):
            try:
                oper = K(value)
            except ValueError:
                oper = None
        if oper is None:
            self.fail(f"{param} {value!r} is not a KernelOper_T (unknown KOP)",
                      "use one of " + ", ".join(a.name for a in allowed))
        if oper not in allowed:
            self.fail(f"{param} {oper.name} is not {what}", "use one of " + ", ".join(a.name for a in allowed))
        return oper

    def declared(self, kernels, loader: str = SQ8_LOADER) -> None:
        """Every basic kernel of ``kernels`` (None entries skipped) is declared in the model."""
        libs = current_model().libs
        for k in kernels:
            if k is not None and k not in libs:
                self.fail(f"basic kernel '{k}' is not declared", loader)
