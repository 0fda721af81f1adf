"""The schedule builder shares expressions across the candidates of a kernel (views, offsets and
sizes keyed by how the indices were made), and LibKernel skips work it already did (a Cost text
already checked for the same scalar names, the global C names until a declaration changes
them): neither may change a schedule, a prediction or an error."""

from __future__ import annotations

import pytest

from autotiler import Model, SetMemorySizes
from autotiler.api import CArgs, LibKernel, TCArg
from autotiler.constants import CALL_PARALLEL
from autotiler.constants import KernelOper_T as K
from autotiler.errors import ModelError
from autotiler.generators import LoadCNNLibrary
from autotiler.generators.cnn_conv import CNN_ConvolutionPoolReLU
from autotiler.model.session import current_model
from autotiler.objectives import candidates, solve_options
from autotiler.schedule import build as build_mod
from autotiler.schedule.build import build_schedule
from autotiler.schedule.cost import predict


def _layer(name, cin, cout, w, oper, f, s):
    q = (7, 7, 7, 7)
    CNN_ConvolutionPoolReLU(name, 0, 1, 1, 1, 1, *q, 0, 0, 0, 0, cin, cout, w, w, oper, f, f, 1, 1, s, s, 1,
                            K.KOP_NONE, 1, 1, 1, 1, 1, 1, 0, K.KOP_RELU)


@pytest.mark.parametrize("layer", [("Dw", 32, 32, 32, K.KOP_CONV_DWDP, 3, 2), ("Pw", 64, 64, 16, K.KOP_CONV_DP, 1, 1)])
def test_shared_expressions_change_no_schedule(layer):
    with Model():
        SetMemorySizes(64 * 1024, 512 * 1024)
        LoadCNNLibrary()
        _layer(*layer)
        model = current_model()
        for uk in model.kernels.values():
            options = solve_options(model, uk)
            cands = candidates(uk, options)
            assert cands
            for t in cands:
                cargs = [c.name for c in t.kernel.cargs]
                warm = build_schedule(t, options.libs, options.naming)
                build_mod._VIEWS.clear()
                saved = dict(build_mod._SIGS)
                build_mod._SIGS.clear()
                try:
                    # nothing shared: every index signature unknown
                    build_mod._MAX, old_max = 0, build_mod._MAX
                    cold = build_schedule(t, options.libs, options.naming)
                finally:
                    build_mod._MAX = old_max
                    build_mod._SIGS.clear()
                    build_mod._SIGS.update(saved)
                assert warm == cold and repr(warm) == repr(cold)
                assert predict(warm, options.platform, cargs) == predict(cold, options.platform, cargs)
                assert t.predicted == predict(warm, options.platform, cargs)


def test_lib_kernel_checks_still_apply():
    with Model():
        args = CArgs(2, TCArg("int", "W"), TCArg("int *", "In"))
        LibKernel("KerA", CALL_PARALLEL, args, "KerA_T", Cost="W + 1")
        # the same text over other scalar names is checked again
        with pytest.raises(ModelError, match="not a scalar argument"):
            LibKernel("KerB", CALL_PARALLEL, CArgs(1, TCArg("int", "H")), "KerB_T", Cost="W + 1")
        # a basic kernel named as an existing argument struct type, and the reverse
        with pytest.raises(ModelError, match="argument struct type"):
            LibKernel("KerA_T", CALL_PARALLEL, args, "KerC_T")
        with pytest.raises(ModelError, match="basic kernel 'KerA'"):
            LibKernel("KerD", CALL_PARALLEL, args, "KerA")
        # a struct type shared by two basic kernels is fine; a name declared since is seen
        LibKernel("KerE", CALL_PARALLEL, args, "KerA_T", Cost="W + 1")
        with pytest.raises(ModelError, match="basic kernel 'KerE'"):
            LibKernel("KerF", CALL_PARALLEL, args, "KerE")
