"""autotiler: an open re-implementation of the GAP AutoTiler.

``from autotiler import *`` gives the model API (LibKernel, UserKernel, KernelIterSpace, KerArg,
...) in both the v3 form and the guide's v2 form, the CNN generators (LoadCNNLibrary,
CNN_ConvolutionPoolReLU, ...), and every constant with the original's names (OBJ_*, O_*, LOC_*,
KER_*, KOP_*, ...). Pipeline, in module order: model -> tiler -> schedule ->
objectives -> codegen -> reports; see docs/architecture.md.
"""

__version__ = "0.2.0"

from .api import *  # noqa: E402,F401,F403
from .api import __all__ as _api_all  # noqa: E402
from .constants import *  # noqa: E402,F401,F403
from .constants import __all__ as _constants_all  # noqa: E402
from .errors import (  # noqa: E402,F401
    AutoTilerError,
    AutoTilerWarning,
    CodegenError,
    HarnessError,
    ModelError,
    OptionsError,
    PlatformError,
    TilingError,
)
from .generators import *  # noqa: E402,F401,F403
from .generators import __all__ as _generators_all  # noqa: E402

__all__ = list(_api_all) + list(_constants_all) + list(_generators_all) + [
    "AutoTilerError", "CodegenError", "HarnessError", "ModelError", "OptionsError", "PlatformError",
    "TilingError", "AutoTilerWarning",
]
