"""MobileNet v1 (width 0.25, 128x128x3) in SQ8 form, TensorFlow Lite Micro's int8 arithmetic, as a
graph of the SQ8 generators' layers under GAP8 budgets: L1 64 KiB, L2 512 KiB less the application's
input and output, 8 MiB of L3 RAM and a 64 MiB HyperFlash (as examples/mobilenet, the fp version).

Layers, quantisation and constants: network.py. One graph ``MobileNetSq8(Input, <constants>,
Output)``, the input int8 [128][128][3] (HWC) and the output the softmax's int8 [1000], 34 nodes::

    Conv0                         CNN_ConvolutionPoolAct_SQ8 KOP_CONV 3x3 s2 "same", ReLU6 (KOP_RELUN)
    DW1 PW1 ... DW13 PW13         KOP_CONV_DW 3x3 (s1/s2) "same"; KOP_CONV 1x1; ReLU6
    Pool                          CNN_GlobalPoolAct_SQ8 KOP_GLOBAL_AVGPOOL (TFLite's MEAN)
    Linear0 ... Linear4           CNN_LinearAct_SQ8 256 -> 200 into the parts of Logits
    SoftMax                       CNN_SoftMax_SQ8 1000, int8 out

Every generator gets ``Scale_DataSize`` 4 (or, when it has no such argument, the Ctrl field
``SCALE_DATASIZE`` 4): TFLM's requantisation, HWC. Each convolution and classifier part binds seven
arguments: In, Filter, Bias (int32), Out, Scale (int32 multipliers), ScaleN (int8 shifts), Infos;
the constants are ``ConstInfo`` tensor files homed in flash.

Run: ``python examples/mobilenet_sq8/model.py -o OUTDIR`` or ``autotiler generate
examples/mobilenet_sq8/model.py -o OUTDIR``; build with ``host_harness.build(OUTDIR,
sources=CNN_SQ8_SOURCES, include_dirs=[CNN_KERNELS_DIR])``.
"""

import importlib.util
import sys
from pathlib import Path

try:
    from autotiler import *  # noqa: F401,F403  (the model API, same names as the C library)
except ImportError:  # running from a source checkout without the package installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from autotiler import *  # noqa: F401,F403

HERE = Path(__file__).resolve().parent


def _network():
    name = "examples_mobilenet_sq8_network"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, HERE / "network.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


NET = _network()
NAME = NET.NAME
KiB, MiB = 1024, 1024 * 1024
L1_BUDGET = 64 * KiB
L2_SIZE = 512 * KiB
IO_BYTES = NET.IN_FEAT * NET.IN_H * NET.IN_W + NET.CLASSES        # Input and Output (int8): the application's
L2_BUDGET = (L2_SIZE - IO_BYTES) // (4 * KiB) * (4 * KiB)
L3_BUDGET = 8 * MiB
FLASH_BUDGET = 64 * MiB
GENERATED_FILES = ("MobileNetSq8Kernels.c", "MobileNetSq8Kernels.h")
FLASH_IMAGE = "MobileNetSq8_L3_Flash_Const.dat"
CTYPES = {"W": "signed char", "B": "int", "S": "int", "N": "signed char", "I": "signed char"}
CONVS, LINEARS = NET.CONVS, NET.LINEARS
NODES = tuple(c.name for c in CONVS) + ("Pool",) + LINEARS + ("SoftMax",)
ACTIVATIONS = tuple(NET.output_name(c.name) for c in CONVS) + ("Pool_Out", "Logits")
WEIGHTED_ARGS = (("Filter", "W"), ("Bias", "B"), ("Scale", "S"), ("ScaleN", "N"), ("Infos", "I"))


def ConfigureTiler(L1Memory, L2Memory, L3Memory, FlashMemory, ConstDir):
    SetInlineMode(ALWAYS_INLINE)
    SetSymbolDynamics()
    SetUsedFilesNames(0, 1, CNN_SQ8_HEADER)
    SetGeneratedFilesNames(*GENERATED_FILES)
    SetMemoryDeviceInfos(4,
        AT_MEM_L1, L1Memory, "MobileNetSq8_L1_Memory", 0, 0,
        AT_MEM_L2, L2Memory, "MobileNetSq8_L2_Memory", 0, 0,
        AT_MEM_L3_HRAM, L3Memory, "MobileNetSq8_L3_Memory", 0, 0,
        AT_MEM_L3_HFLASH, FlashMemory, "0", FLASH_IMAGE, 0)
    SetConstDir(str(ConstDir))


def tflm_ctrl():
    """The Ctrl of the generators without a Scale_DataSize argument: TFLM's requantisation."""
    ctrl = CNN_GenControl_T()
    CNN_InitGenCtrl(ctrl)
    CNN_SetGenCtrl(ctrl, "SCALE_DATASIZE", AT_OPT_VAL(4))
    return ctrl


def MobileNetLayers():
    """One user kernel per node, by the SQ8 generators."""
    for c in CONVS:
        oper = KOP_CONV_DW if c.kind == "dw" else KOP_CONV
        pad = 1 if c.f == 3 else 0
        CNN_ConvolutionPoolAct_SQ8(c.name, 0, 4, 4, c.in_feat, c.out_feat, c.width, c.height,
                                   oper, c.f, c.f, 1, 1, c.stride, c.stride, pad,
                                   KOP_NONE, 0, 0, 0, 0, 0, 0, 0,
                                   KOP_RELUN)
    ctrl = tflm_ctrl()
    CNN_GlobalPoolAct_SQ8("Pool", ctrl, NET.POOL_FEAT, NET.POOL_W, NET.POOL_H, KOP_GLOBAL_AVGPOOL, KOP_NONE)
    for name in LINEARS:
        CNN_LinearAct_SQ8(name, 0, 4, 4, NET.POOL_FEAT, NET.PART, KOP_LINEAR, KOP_NONE)
    CNN_SoftMax_SQ8("SoftMax", ctrl, NET.CLASSES, KOP_SOFTMAX)


def constant(symbol, suffix):
    bits = 32 if CTYPES[suffix] == "int" else 8
    return TCArgInfo(f"{CTYPES[suffix]} * __restrict__", symbol, ARG_SCOPE_GLOBAL, ARG_DIR_CONSTIN, AT_MEM_L3_HFLASH,
                     AT_MEM_UNDEF, ConstInfo(NET.file_name(symbol), 1, 1, bits, 0))


def local(symbol):
    return TCArgInfo("signed char * __restrict__", symbol, ARG_SCOPE_LOCAL, ARG_DIR_INOUT, AT_MEM_UNDEF, AT_MEM_UNDEF,
                     0)


def MobileNetGraph(Name):
    consts = [constant(symbol, symbol.rsplit("_", 1)[1]) for symbol, _, _ in NET.constants()]
    CreateGraph(Name,
        CArgs(2 + len(consts),
            TCArgInfo("signed char * __restrict__", "Input", ARG_SCOPE_ARG, ARG_DIR_IN, AT_MEM_L2, AT_MEM_UNDEF, 0),
            *consts,
            TCArgInfo("signed char * __restrict__", "Output", ARG_SCOPE_ARG, ARG_DIR_OUT, AT_MEM_UNDEF, AT_MEM_L2, 0)
        ),
        CArgs(len(ACTIVATIONS), *[local(a) for a in ACTIVATIONS])
    )
    AddStackedTensors("Logits", len(LINEARS), *[NET.output_name(n) for n in LINEARS])

    def layer(name, src, dst):
        args = [GNodeArg(GNA_IN, src, 0), GNodeArg(GNA_IN, f"{name}_W", 0), GNodeArg(GNA_IN, f"{name}_B", 0),
                GNodeArg(GNA_OUT, dst, 0), GNodeArg(GNA_IN, f"{name}_S", 0), GNodeArg(GNA_IN, f"{name}_N", 0),
                GNodeArg(GNA_IN, f"{name}_I", 0)]
        AddNode(name, Bindings(len(args), *args))

    src = "Input"
    for c in CONVS:
        layer(c.name, src, NET.output_name(c.name))
        src = NET.output_name(c.name)
    AddNode("Pool", Bindings(3, GNodeArg(GNA_IN, src, 0), GNodeArg(GNA_OUT, "Pool_Out", 0),
                             GNodeArg(GNA_IN, "Pool_I", 0)))
    for name in LINEARS:
        layer(name, "Pool_Out", NET.output_name(name))
    AddNode("SoftMax", Bindings(3, GNodeArg(GNA_IN, "Logits", 0), GNodeArg(GNA_OUT, "Output", 0),
                                GNodeArg(GNA_IN, "SoftMax_I", 0)))
    CloseGraph()


def declare(l1=L1_BUDGET, l2=L2_BUDGET, l3=L3_BUDGET, flash=FLASH_BUDGET, name=NAME, const_dir=None):
    """Declare the whole model (configuration, SQ8 library, layers, graph) in the current model."""
    ConfigureTiler(l1, l2, l3, flash, const_dir if const_dir is not None else NET.ensure_weights())
    LoadCNN_SQ8_Library()
    MobileNetLayers()
    MobileNetGraph(name)


def main(argv=None):
    argv = sys.argv if argv is None else argv
    if TilerParseOptions(argv):
        print("Failed to initialize or incorrect arguments.", file=sys.stderr)
        return 1
    declare()
    GenerateTilingCode()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
