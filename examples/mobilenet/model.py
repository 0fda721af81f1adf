"""MobileNet v1 (width 0.25, 128x128x3 input, 8-bit "fps" fixed point, random but fixed weights) as
a graph of the CNN generators' layers, under GAP8 budgets: L1 64 KiB, L2 512 KiB, 8 MiB of L3 RAM
(HyperRAM) and a 64 MiB HyperFlash. The graph plans 460 KiB of the L2 (``L2_BUDGET``): its input
and output are the application's buffers (graph arguments, 51,152 B), which the planner does not
place and which must fit in the same 512 KiB (the simulated GAP8 refuses them otherwise).

Layers, Q formats, weights and why the classifier is five nodes: network.py. One graph
``MobileNet(Input, <constants>, Output)``, the input int8 [3][128][128] Q7 and the output the
softmax's int16 [1000] Q15, 34 nodes in this order::

    Conv0                         CNN_ConvolutionPoolReLU KOP_CONV_DP 3x3 s2, ReLU
    DW1 PW1 ... DW13 PW13         KOP_CONV_DW 3x3 (s1/s2), ReLU; KOP_CONV_DP 1x1, ReLU
    Pool                          CNN_GlobalPool KOP_GLOBAL_AVGPOOL
    Linear0 ... Linear4           CNN_LinearReLU 256 -> 200, KOP_NONE, into the parts of Logits
    SoftMax                       CNN_SoftMax 1000, Q15 out

The 64 constants (every filter and bias, 467,336 bytes) are ``ConstInfo`` tensor files homed in
the flash; the activations are locals (``<layer>_Out``), ``Logits`` the stack of the five
classifier parts (``AddStackedTensors``). At the GAP8 budget the constants cannot all be promoted
to L2 next to the activations (98,304 B live at most): the planner promotes 14 of them (372,736 B)
and prefetches the other 50 from flash before their nodes, at each run. Under tighter L2 budgets
(``declare(l2=...)``, ``--L2``) no constant is promoted and the activations that do not fit move
to L3 RAM (at 80 KiB: DW1_Out and DW2_Out).

Run: ``python examples/mobilenet/model.py -o OUTDIR [--L1 BYTES] [--L2 BYTES] [--objective NAME]``
or ``autotiler generate examples/mobilenet/model.py -o OUTDIR``. The weights are written on first
use into a cache directory (network.py), which is the model's ``SetConstDir``; ``-c DIR`` reads
them from DIR instead (``python examples/mobilenet/network.py --out DIR`` writes them there).
Build the generated code with ``host_harness.build(OUTDIR, sources=CNN_SOURCES,
include_dirs=[CNN_KERNELS_DIR])``.
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
    """network.py, loaded once per process (registered: its dataclasses need their module)."""
    name = "examples_mobilenet_network"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, HERE / "network.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


NET = _network()

# Model-level constants (imported by the tests and the benchmark)
NAME = NET.NAME                          # the graph, i.e. the generated runner
KiB, MiB = 1024, 1024 * 1024
L1_BUDGET = 64 * KiB                     # GAP8's cluster L1
L2_SIZE = 512 * KiB                      # GAP8's L2
IO_BYTES = NET.IN_FEAT * NET.IN_H * NET.IN_W + NET.CLASSES * 2   # Input and Output: the application's, in L2
L2_BUDGET = (L2_SIZE - IO_BYTES) // (4 * KiB) * (4 * KiB)        # what the graph may plan: 460 KiB
L3_BUDGET = 8 * MiB                      # HyperRAM
FLASH_BUDGET = 64 * MiB                  # HyperFlash
GENERATED_FILES = ("MobileNetKernels.c", "MobileNetKernels.h")
FLASH_IMAGE = "MobileNet_L3_Flash_Const.dat"
S8 = "signed char * __restrict__"
S16 = "short int * __restrict__"
CONVS, LINEARS = NET.CONVS, NET.LINEARS
NODES = tuple(c.name for c in CONVS) + ("Pool",) + LINEARS + ("SoftMax",)
ACTIVATIONS = tuple(NET.output_name(c.name) for c in CONVS) + ("Pool_Out", "Logits")


def ConfigureTiler(L1Memory, L2Memory, L3Memory, FlashMemory, ConstDir):
    SetInlineMode(ALWAYS_INLINE)
    SetSymbolDynamics()
    SetUsedFilesNames(0, 1, CNN_HEADER)
    SetGeneratedFilesNames(*GENERATED_FILES)
    SetMemoryDeviceInfos(4,
        AT_MEM_L1, L1Memory, "MobileNet_L1_Memory", 0, 0,
        AT_MEM_L2, L2Memory, "MobileNet_L2_Memory", 0, 0,
        AT_MEM_L3_HRAM, L3Memory, "MobileNet_L3_Memory", 0, 0,
        AT_MEM_L3_HFLASH, FlashMemory, "0", FLASH_IMAGE, 0)
    SetConstDir(str(ConstDir))


def MobileNetLayers():
    """One user kernel per node, by the CNN generators (8-bit: every data size 1)."""
    q_act, q_w = NET.Q_ACT, NET.Q_W
    for c in CONVS:
        oper = KOP_CONV_DW if c.kind == "dw" else KOP_CONV_DP
        pad = 1 if c.f == 3 else 0
        CNN_ConvolutionPoolReLU(c.name, 0, 1, 1, 1, 1, c.in_q, q_w, q_act, q_act, 0, 0, 0, 0,
                                c.in_feat, c.out_feat, c.width, c.height,
                                oper, c.f, c.f, 1, 1, c.stride, c.stride, pad,
                                KOP_NONE, 0, 0, 0, 0, 0, 0, 0,
                                KOP_RELU)
    CNN_GlobalPool("Pool", 0, 1, 1, q_act, q_act, 0, 0, NET.POOL_FEAT, NET.POOL_FEAT, NET.POOL_W, NET.POOL_H,
                   KOP_GLOBAL_AVGPOOL)
    for name in LINEARS:
        CNN_LinearReLU(name, 0, 1, 1, 1, 1, q_act, q_w, q_act, NET.Q_LOGITS, 0, 0, 0, 0, NET.POOL_FEAT, NET.PART,
                       KOP_LINEAR, KOP_NONE)
    CNN_SoftMax("SoftMax", 0, 1, 2, NET.Q_LOGITS, 15, 0, 0, NET.CLASSES, KOP_SOFTMAX)


def constant(symbol):
    return TCArgInfo(S8, symbol, ARG_SCOPE_GLOBAL, ARG_DIR_CONSTIN, AT_MEM_L3_HFLASH, AT_MEM_UNDEF,
                     ConstInfo(NET.file_name(symbol), 1, 1, 8, 0))


def local(symbol):
    return TCArgInfo(S8, symbol, ARG_SCOPE_LOCAL, ARG_DIR_INOUT, AT_MEM_UNDEF, AT_MEM_UNDEF, 0)


def MobileNetGraph(Name):
    consts = [constant(symbol) for symbol, _ in NET.constants()]
    CreateGraph(Name,
        CArgs(2 + len(consts),
            TCArgInfo(S8, "Input", ARG_SCOPE_ARG, ARG_DIR_IN, AT_MEM_L2, AT_MEM_UNDEF, 0),
            *consts,
            TCArgInfo(S16, "Output", ARG_SCOPE_ARG, ARG_DIR_OUT, AT_MEM_UNDEF, AT_MEM_L2, 0)
        ),
        CArgs(len(ACTIVATIONS), *[local(a) for a in ACTIVATIONS])
    )
    # the classifier's five parts write consecutive slices of Logits, which the softmax reads whole
    AddStackedTensors("Logits", len(LINEARS), *[NET.output_name(n) for n in LINEARS])

    def layer(name, src, dst):
        AddNode(name, Bindings(4, GNodeArg(GNA_IN, src, 0), GNodeArg(GNA_IN, f"{name}_W", 0),
                               GNodeArg(GNA_IN, f"{name}_B", 0), GNodeArg(GNA_OUT, dst, 0)))

    src = "Input"
    for c in CONVS:
        layer(c.name, src, NET.output_name(c.name))
        src = NET.output_name(c.name)
    AddNode("Pool", Bindings(2, GNodeArg(GNA_IN, src, 0), GNodeArg(GNA_OUT, "Pool_Out", 0)))
    for name in LINEARS:
        layer(name, "Pool_Out", NET.output_name(name))
    AddNode("SoftMax", Bindings(2, GNodeArg(GNA_IN, "Logits", 0), GNodeArg(GNA_OUT, "Output", 0)))
    CloseGraph()


def declare(l1=L1_BUDGET, l2=L2_BUDGET, l3=L3_BUDGET, flash=FLASH_BUDGET, name=NAME, const_dir=None):
    """Declare the whole model (configuration, CNN library, layers, graph) in the current model
    without generating code; the weights are read from ``const_dir`` (default: written on first
    use into the cache, network.ensure_weights)."""
    ConfigureTiler(l1, l2, l3, flash, const_dir if const_dir is not None else NET.ensure_weights())
    LoadCNNLibrary()
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
