"""One exception hierarchy for the whole product.

Every user-facing error is an :class:`AutoTilerError`. Errors raised while a model is
declared carry the model script's ``file:line`` (``where``), the kernel and the argument
concerned, what is wrong and what to do; ``str(err)`` is a single line suitable for the CLI.
"""

from __future__ import annotations

import sys
import warnings


def render(message: str, where: str | None = None, kernel: str | None = None, arg: str | None = None,
           hint: str | None = None) -> str:
    """The one-line form of an error or warning: ``file:line: kernel 'K', argument 'A': what (fix)``."""
    parts = []
    if where:
        parts.append(f"{where}:")
    subject = []
    if kernel:
        subject.append(f"kernel '{kernel}'")
    if arg:
        subject.append(f"argument '{arg}'")
    if subject:
        parts.append(", ".join(subject) + ":")
    parts.append(message)
    text = " ".join(parts)
    if hint:
        text += f" ({hint})"
    return text


class AutoTilerError(Exception):
    """Root of every error autotiler raises on purpose."""

    def __init__(self, message: str, *, where: str | None = None, kernel: str | None = None,
                 arg: str | None = None, hint: str | None = None):
        self.message = message
        self.where = where
        self.kernel = kernel
        self.arg = arg
        self.hint = hint
        super().__init__(render(message, where, kernel, arg, hint))


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


class ImportModelError(AutoTilerError):
    """A trained model (TFLite, ONNX) cannot be imported: not a model, truncated, an operator or a
    data type not supported. ``where`` names the model file and the operator (``net.tflite:
    operator 3 (CONV_2D)``), ``arg`` the tensor."""


class AutoTilerWarning(UserWarning):
    """Something autotiler accepts but that may not mean what the script intends, worded like an
    error (file:line, kernel, argument, what, what to do): e.g. a user kernel declared with
    AT_KERNEL_NOSOLUTION_ERROR off that no declaration under its name tiled (at generation), or
    an argument whose tiling the v3 rule decides although its flags do not say."""


class ModelWarning(AutoTilerWarning):
    """``GenTilingWarning`` from a model script."""


def print_warning(message, file=None) -> None:
    """One warning line as errors print theirs: ``autotiler: warning: file:line: ...``."""
    try:
        print(f"autotiler: warning: {message}", file=file if file is not None else sys.stderr)
    except OSError:
        pass  # as Python's own: no stderr (or a closed one) loses the warning, not the run


def _show(message, category, filename, lineno, file=None, line=None) -> None:
    """Print an autotiler warning with :func:`print_warning`, without Python's category and source
    echo. Other warnings print as Python prints them."""
    if not issubclass(category, AutoTilerWarning):
        _python_show(message, category, filename, lineno, file, line)
        return
    print_warning(message, file)


_python_show = warnings.showwarning
warnings.showwarning = _show


def warn(message: str, *, where: str | None = None, kernel: str | None = None, arg: str | None = None,
         hint: str | None = None) -> None:
    """Emit an AutoTilerWarning, attributed to the model script's ``where`` (file:line)."""
    text = render(message, where, kernel, arg, hint)
    filename, _, line = (where or "").rpartition(":")
    if filename and line.isdigit():
        warnings.warn_explicit(text, AutoTilerWarning, filename, int(line))
    else:
        warnings.warn(text, AutoTilerWarning, stacklevel=2)
