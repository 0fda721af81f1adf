"""autotiler: an open re-implementation of the GAP AutoTiler.

``from autotiler import *`` gives the guide's model API (LibKernel, UserKernel, KerArg, ...) and
every constant of the guide (OBJ_*, O_*, LOC_*, KER_*, ...). Pipeline, in module order:
model -> tiler -> (graph planner) -> codegen -> reports; see docs/architecture.md.
"""

from .api import *  # noqa: F401,F403
from .api import __all__ as _api_all
from .constants import *  # noqa: F401,F403
from .constants import __all__ as _constants_all
from .errors import (  # noqa: F401
    AutoTilerError,
    CodegenError,
    HarnessError,
    ModelError,
    OptionsError,
    PlatformError,
    TilingError,
)
from .tiler import AutoTilerWarning  # noqa: F401

__version__ = "0.1.0"

__all__ = list(_api_all) + list(_constants_all) + [
    "AutoTilerError", "CodegenError", "HarnessError", "ModelError", "OptionsError", "PlatformError",
    "TilingError", "AutoTilerWarning",
]
