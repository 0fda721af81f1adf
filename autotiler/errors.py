"""One exception hierarchy for the whole product.

Every user-facing error is an :class:`AutoTilerError`. Errors raised while a model is
declared carry the model script's ``file:line`` (``where``), the kernel and the argument
concerned, what is wrong and what to do; ``str(err)`` is a single line suitable for the CLI.
"""

from __future__ import annotations


class AutoTilerError(Exception):
    """Root of every error autotiler raises on purpose."""

    def __init__(self, message: str, *, where: str | None = None, kernel: str | None = None,
                 arg: str | None = None, hint: str | None = None):
        self.message = message
        self.where = where
        self.kernel = kernel
        self.arg = arg
        self.hint = hint
        super().__init__(self._render())

    def _render(self) -> str:
        parts = []
        if self.where:
            parts.append(f"{self.where}:")
        subject = []
        if self.kernel:
            subject.append(f"kernel '{self.kernel}'")
        if self.arg:
            subject.append(f"argument '{self.arg}'")
        if subject:
            parts.append(", ".join(subject) + ":")
        parts.append(self.message)
        text = " ".join(parts)
        if self.hint:
            text += f" ({self.hint})"
        return text


class ModelError(AutoTilerError):
    """The model script declares something invalid (bad names, sizes, flags, bindings)."""


class OptionsError(AutoTilerError):
    """Bad command-line options given to TilerParseOptions."""


class TilingError(AutoTilerError):
    """No tiling of a user kernel fits the L1 budget."""


class CodegenError(AutoTilerError):
    """Code could not be generated or written."""


class HarnessError(AutoTilerError):
    """The host harness could not build or run generated code, or the simulated chip
    detected a fault (out-of-range DMA, unknown event, transfer pending at return, ...)."""


class PlatformError(AutoTilerError):
    """Unknown platform or invalid platform parameters."""


class AutoTilerWarning(UserWarning):
    """A user kernel declared with AT_KERNEL_NOSOLUTION_ERROR off had no tiling and no other
    declaration under its name produced code (emitted when the code is generated)."""
