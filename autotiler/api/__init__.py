"""The model API, with the original's names and argument orders (v3 and the guide's v2).

A model script written for the original ports line by line::

    LibKernel("MatSumPar", CALL_PARALLEL, CArgs(5, TCArg("Word32 * __restrict__", "In1"), ...),
              "MatrixAdd_Arg_T")
    UserKernel("MatAdd", KernelIterSpace(1, IterTiledSpace(KER_ITER_TILE0)), TILE_HOR, CArgs(...),
               Calls(...), KerArgs(KerArg("In1", KerArgSpace(1, KER_ITER_TILE0), O_IN|O_DB, W, H, 4, 0, 0, 0, "In1"), ...))

Count-prefixed builders (``CArgs``, ``Calls``, ``Bindings``, ``KerArgs``) take the leading count
as in C; when given it must match, and it may be omitted. Every function acts on the current
:class:`~autotiler.model.session.Model`.
"""

import functools
import inspect

from ..errors import ModelError
from ..model.ir import AT_IGNORE_ARG_BINDING, AT_NO_ARG_BINDING, AT_NO_C_ARG, AT_NO_CALL, AT_NO_KER_ARG, caller_where  # noqa: F401
from ..model.session import Model, paused_gc  # noqa: F401
from .common import sizeof  # noqa: F401
from .declare import *  # noqa: F401,F403
from .declare import __all__ as _declare_all
from .graph import *  # noqa: F401,F403
from .graph import __all__ as _graph_all
from .kernels import *  # noqa: F401,F403
from .kernels import __all__ as _kernels_all
from .settings import *  # noqa: F401,F403
from .settings import __all__ as _settings_all


def Max(a, b):
    return a if a > b else b


def Min(a, b):
    return a if a < b else b


__all__ = sorted(set(_declare_all) | set(_kernels_all) | set(_settings_all) | set(_graph_all) | {
    "AT_IGNORE_ARG_BINDING", "AT_NO_ARG_BINDING", "AT_NO_C_ARG", "AT_NO_CALL", "AT_NO_KER_ARG", "Model", "sizeof",
    "Max", "Min"})


def _arity_checked(fn):
    """``fn`` refusing a call whose arguments do not fit its signature with a ModelError at the
    script's line (Python's own TypeError would name neither the line nor the form to use), and
    running with the garbage collector paused (``paused_gc``)."""
    sig = inspect.signature(fn)
    form = f"{fn.__name__}(" + ", ".join(("*" if p.kind == p.VAR_POSITIONAL else "**" if p.kind == p.VAR_KEYWORD
                                          else "") + p.name for p in sig.parameters.values()) + ")"

    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            sig.bind(*args, **kwargs)
        except TypeError as err:
            raise ModelError(f"{fn.__name__}: {err}", where=caller_where(),
                             hint=f"call it as {form}") from None
        with paused_gc():
            return fn(*args, **kwargs)
    return call


for _name in __all__:
    if inspect.isfunction(globals()[_name]):
        globals()[_name] = _arity_checked(globals()[_name])
