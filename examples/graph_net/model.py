"""A small CNN as a graph (the guide's "Graph mode"): seven user kernels chained into one function
``GraphNet(In, Out)`` with its constructor and destructor.

Every convolution is examples/cnn_conv_v3's 3-space user kernel (``CNN_ConvolutionPoolReLU``,
16-bit DP: output features in chunks D1 > horizontal tiles T0 > input features in chunks D0,
"same" padding through KerArgP, ReLU; at L1_BUDGET every convolution takes its input features in
chunks, Conv1 and Conv2 also in two tiles, the 4 or 8 output features in one chunk), every tensor
int16 Q11 of 16 x 16 items a feature::

    node  user kernel  reads              writes           what
    0     Conv1        In, F1, B1         T1  [8]          conv 4 -> 8 features
    1     ConvA        T1, F2, B2         S0  [4]          branch a: conv 8 -> 4, S's first half
    2     ConvB        T1, F3, B3         S1  [4]          branch b: conv 8 -> 4, S's second half
    3     Add1         S, T1              T2  [8]          S = S0 S1 read whole, + T1 (residual join)
    4     Conv2        T2, F4, B4         T3  [8]          conv 8 -> 8
    5     AddIP        T3, T2             T4 = T3 [8]      T3 += T2 in place (INOUT alias)
    6     Conv3        T4, F5, B5         Out [4]          conv 8 -> 4

* the branch: T1 is read by three nodes (the two halves of the concatenation and the residual);
* the concatenation: ``AddStackedTensors("S", 2, "S0", "S1")``: ConvA and ConvB write the halves
  of S in place, Add1 reads S whole;
* the constants come from consts/ (``SetConstDir``): F1 is a float32 file converted to Q8 by
  ``ConstInfo("F1.f32", 0, 1, 16, 8)``, B1 a text file, the others raw int16;
* the in-place update: AddIP's output T4 is ``GNodeArg(GNA_INOUT, "T4", "T3")``, T3's buffer.

Memory: the planner keeps symbols bound to stacked tensors or aliases in L2 (S, S0, S1, T3,
T4); T1 and T2 are plain locals that it may move to L3 RAM when the L2 budget is too small
(the nodes touching them then call ``<Kernel>_L3_<node>`` variants). Constants are promoted to
static L2 at construction when L2 allows, otherwise fetched from flash at each run.

Run: ``python examples/graph_net/model.py -o OUTDIR [--L1 BYTES] [--L2 BYTES]`` or
``autotiler generate examples/graph_net/model.py -o OUTDIR``.
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
CONSTS = HERE / "consts"


def _conv_v3():
    """examples/cnn_conv_v3/model.py: the convolution's generator and basic-kernel models."""
    spec = importlib.util.spec_from_file_location("graph_net_conv_v3", HERE.parent / "cnn_conv_v3" / "model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CONV = _conv_v3()

# Model-level constants (imported by the tests).
NAME = "GraphNet"            # the graph, i.e. the generated runner
IN_FEAT = 4
WIDTH = HEIGHT = 16
Q = 11                       # every activation and bias is Q11
FILTER_Q = 8
# (node kernel, input features, output features, filter file, its ConstInfo (Format, Binary, Size, Fract),
#  bias file, its ConstInfo)
CONVS = {
    "Conv1": (4, 8, "F1.f32", (0, 1, 16, FILTER_Q), "B1.txt", (1, 0, 16, 0)),
    "ConvA": (8, 4, "F2.q8", (1, 1, 16, 0), "B2.q11", (1, 1, 16, 0)),
    "ConvB": (8, 4, "F3.q8", (1, 1, 16, 0), "B3.q11", (1, 1, 16, 0)),
    "Conv2": (8, 8, "F4.q8", (1, 1, 16, 0), "B4.q11", (1, 1, 16, 0)),
    "Conv3": (8, 4, "F5.q8", (1, 1, 16, 0), "B5.q11", (1, 1, 16, 0)),
}
ADDS = {"Add1": 8, "AddIP": 8}   # saturating adds, features
L1_BUDGET = 10240            # cuts the convolutions' spaces: input features in chunks (D0), Conv1/Conv2 in 2 tiles (T0)
L2_BUDGET = 64 * 1024        # generous: everything in L2, constants promoted
L3_BUDGET = 1 << 20
BASIC_KERNELS_HEADER = "GraphNetBasicKernels.h"
GENERATED_FILES = ("GraphNetKernels.c", "GraphNetKernels.h")
S16 = "short int * __restrict__"


def ConfigureTiler(L1Memory, L2Memory, L3Memory):
    SetInlineMode(ALWAYS_INLINE)
    SetSymbolDynamics()
    SetUsedFilesNames(0, 1, BASIC_KERNELS_HEADER)
    SetGeneratedFilesNames(*GENERATED_FILES)
    SetMemorySizes(L1Memory, L2Memory, L3Memory)
    SetConstDir(str(CONSTS))


def LoadAddLibrary():
    # Cost (an estimate): ~5 cycles an item (2 loads, add, 2 compares, store) over the cores + 20
    LibKernel("KerAdd16Par", CALL_PARALLEL,
        CArgs(5,
            TCArg(S16, "In1"),
            TCArg(S16, "In2"),
            TCArg(S16, "Out"),
            TCArg("unsigned int", "W"),
            TCArg("unsigned int", "H")
        ),
        "KerAdd16_T",
        Cost="5*((W*H + ncores - 1)/ncores) + 20"
    )


def Add16Generator(Name, Feat, Width, Height):
    """Out = sat16(In1 + In2), three [Feat][Height][Width] int16 tensors seen as one plane of
    Width x (Feat*Height), tiled horizontally."""
    return UserKernel(Name,
        KernelDimensions(1, Width, Feat * Height, 1),
        KernelIterationOrder(KER_DIM2, KER_TILE),
        TILE_HOR,
        CArgs(3, TCArg(S16, "In1"), TCArg(S16, "In2"), TCArg(S16, "Out")),
        Calls(1,
            Call("KerAdd16Par", LOC_INNER_LOOP,
                Bindings(5,
                    K_Arg("In1", KER_ARG_TILE),
                    K_Arg("In2", KER_ARG_TILE),
                    K_Arg("Out", KER_ARG_TILE),
                    K_Arg("In1", KER_ARG_TILE_W),
                    K_Arg("In1", KER_ARG_TILE_H)
                )
            )
        ),
        KerArgs(3,
            KerArg("In1", OBJ_IN_DB, Width, Feat * Height, 2, 0, 0, 0, "In1", 0),
            KerArg("In2", OBJ_IN_DB, Width, Feat * Height, 2, 0, 0, 0, "In2", 0),
            KerArg("Out", OBJ_OUT_DB, Width, Feat * Height, 2, 0, 0, 0, "Out", 0)
        )
    )


def tensor(name, scope=ARG_SCOPE_LOCAL, direction=ARG_DIR_INOUT, home=AT_MEM_UNDEF, exec_loc=AT_MEM_UNDEF):
    return TCArgInfo(S16, name, scope, direction, home, exec_loc, 0)


def constant(name, file, info):
    return TCArgInfo(S16, name, ARG_SCOPE_GLOBAL, ARG_DIR_CONSTIN, AT_MEM_L3_HFLASH, AT_MEM_UNDEF,
                     ConstInfo(file, *info))


def GraphNetGenerator(Name):
    """The graph (see the module's docstring)."""
    consts = []
    for i, (_, _, ffile, finfo, bfile, binfo) in enumerate(CONVS.values(), start=1):
        consts += [constant(f"F{i}", ffile, finfo), constant(f"B{i}", bfile, binfo)]
    CreateGraph(Name,
        CArgs(2 + len(consts),
            tensor("In", ARG_SCOPE_ARG, ARG_DIR_IN, AT_MEM_L2, AT_MEM_UNDEF),
            *consts,
            tensor("Out", ARG_SCOPE_ARG, ARG_DIR_OUT, AT_MEM_UNDEF, AT_MEM_L2)
        ),
        CArgs(5, *[tensor(n) for n in ("T1", "S", "T2", "T3", "T4")])
    )
    # S = S0 S1: ConvA and ConvB write its halves, Add1 reads it whole (a concatenation)
    AddStackedTensors("S", 2, "S0", "S1")

    def conv(node, i, src, dst):
        AddNode(node, Bindings(4, GNodeArg(GNA_IN, src, 0), GNodeArg(GNA_IN, f"F{i}", 0),
                               GNodeArg(GNA_IN, f"B{i}", 0), GNodeArg(GNA_OUT, dst, 0)))

    conv("Conv1", 1, "In", "T1")
    conv("ConvA", 2, "T1", "S0")
    conv("ConvB", 3, "T1", "S1")
    AddNode("Add1", Bindings(3, GNodeArg(GNA_IN, "S", 0), GNodeArg(GNA_IN, "T1", 0), GNodeArg(GNA_OUT, "T2", 0)))
    conv("Conv2", 4, "T2", "T3")
    # T3 += T2, in place: T4 is T3's buffer
    AddNode("AddIP", Bindings(3, GNodeArg(GNA_IN, "T3", 0), GNodeArg(GNA_IN, "T2", 0),
                              GNodeArg(GNA_INOUT, "T4", "T3")))
    conv("Conv3", 5, "T4", "Out")
    CloseGraph()


def declare(l1=L1_BUDGET, l2=L2_BUDGET, l3=L3_BUDGET, name=NAME):
    """Declare the whole model (configuration, basic kernels, user kernels, graph) in the
    current model without generating code."""
    ConfigureTiler(l1, l2, l3)
    CONV.LoadConvV3Library()
    LoadAddLibrary()
    for node, (n_in, n_out, *_) in CONVS.items():
        CONV.CNN_ConvolutionPoolReLU(node, Q, FILTER_Q, Q, Q, n_in, n_out, WIDTH, HEIGHT, 3, 3, 1, 1, 1,
                                     CONV.KOP_RELU)
    for node, feat in ADDS.items():
        Add16Generator(node, feat, WIDTH, HEIGHT)
    GraphNetGenerator(name)


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
