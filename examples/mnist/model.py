"""The AutoTiler guide's MNIST graph (its first listing, ``MnistModel``), line by line.

Two 5x5 convolutions with 2x2 max pooling and ReLU, a 1024 -> 10 linear layer and a softmax, in
16-bit fixed point, chained as a graph whose constants (trained weights, ``model/*.tensor``: see
TRAINING.md) live in flash. The differences from the C listing are Python's: ``from autotiler
import *`` instead of the includes, keyword-free calls in the same order, ``main()``.

Run (the ConstInfo paths are relative, as in the guide; ``main`` sets the constants directory
to this script's, ``-c DIR`` overrides it)::

    python examples/mnist/model.py -o generated/mnist

Generated: ``MnistKernels.c/.h`` (the four layers' user kernels and the graph's
``MnistCNN_Construct``, ``MnistCNN``, ``MnistCNN_Destruct``, ``MnistCNN_Memory``) and the flash
image ``Mnist_L3_Flash_Const.dat``.
"""

import os
import sys

try:
    from autotiler import *  # noqa: F401,F403  (the model API, same names as the C library)
except ModuleNotFoundError:  # run from a source checkout without installing
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from autotiler import *  # noqa: F401,F403

GRAPH = "MnistCNN"


def MnistModel(L1Memory, L2Memory, L3Memory, L3Flash):
    Cop = KOP_CONV_DP

    SetSymbolDynamics()

    SetUsedFilesNames(0, 2, "CNN_BasicKernels.h", "MnistKernels.h")
    SetGeneratedFilesNames("MnistKernels.c", "MnistKernels.h")
    SetMemoryDeviceInfos(4,
        AT_MEM_L1, L1Memory, "Mnist_L1_Memory", 0, 0,
        AT_MEM_L2, L2Memory, "Mnist_L2_Memory", 0, 0,
        AT_MEM_L3_DEFAULTRAM, L3Memory, "Mnist_L3_Memory", 0, 0,
        AT_MEM_L3_DEFAULTFLASH, L3Flash, "0", "Mnist_L3_Flash_Const.dat", 0
    )

    AT_SetGraphCtrl(AT_GRAPH_TRACE_EXEC, AT_OPT_ON)

    LoadCNNLibrary()
    # Convolutional Layer
    CNN_ConvolutionPoolReLU("Conv5x5ReLUMaxPool2x2_0", 0, 2, 2, 2, 2, 12, 14, 14, 12, 1, 1, 1, 1, 1, 32, 28, 28,
        Cop, 5, 5, 1, 1, 1, 1, 0,
        KOP_MAXPOOL, 2, 2, 1, 1, 2, 2, 0, KOP_RELU)
    # Convolutional Layer
    CNN_ConvolutionPoolReLU("Conv5x5ReLUMaxPool2x2_1", 0, 2, 2, 2, 2, 12, 14, 14, 12, 1, 1, 1, 1, 32, 64, 12, 12,
        Cop, 5, 5, 1, 1, 1, 1, 0,
        KOP_MAXPOOL, 2, 2, 1, 1, 2, 2, 0, KOP_RELU)
    # Linear Layer
    CNN_LinearReLU("LinearLayerReLU_0", 0, 2, 2, 2, 2, 12, 12, 8, 11, 2, 2, 2, 2, 1024, 10,
        KOP_LINEAR, KOP_NONE)
    # Softmax
    CNN_SoftMax("SoftMax_0", 0, 2, 2, 15, 15, 1, 1, 10, KOP_SOFTMAX)

    # Open Graph Creation
    CreateGraph(GRAPH,
        # Arguments either passed or globals: input, output and the layers' parameters (weights and
        # biases); ConstInfo reads a tensor in CxHxW format into the flash image
        CArgs(8,
            TCArgInfo("short int *__restrict__", "Input0", ARG_SCOPE_ARG, ARG_DIR_IN, AT_MEM_L2, AT_MEM_UNDEF, 0),
            TCArgInfo("short int *__restrict__", "Step1Weights", ARG_SCOPE_GLOBAL, ARG_DIR_CONSTIN, AT_MEM_L3_HFLASH,
                      AT_MEM_UNDEF, ConstInfo("model/Step1Weights.tensor", 1, 1, 16, 0)),
            TCArgInfo("short int *__restrict__", "Step1Biases", ARG_SCOPE_GLOBAL, ARG_DIR_CONSTIN, AT_MEM_L3_HFLASH,
                      AT_MEM_UNDEF, ConstInfo("model/Step1Biases.tensor", 1, 1, 16, 0)),
            TCArgInfo("short int *__restrict__", "Step2Weights", ARG_SCOPE_GLOBAL, ARG_DIR_CONSTIN, AT_MEM_L3_HFLASH,
                      AT_MEM_UNDEF, ConstInfo("model/Step2Weights.tensor", 1, 1, 16, 0)),
            TCArgInfo("short int *__restrict__", "Step2Biases", ARG_SCOPE_GLOBAL, ARG_DIR_CONSTIN, AT_MEM_L3_HFLASH,
                      AT_MEM_UNDEF, ConstInfo("model/Step2Biases.tensor", 1, 1, 16, 0)),
            TCArgInfo("short int *__restrict__", "Step3Weights", ARG_SCOPE_GLOBAL, ARG_DIR_CONSTIN, AT_MEM_L3_HFLASH,
                      AT_MEM_UNDEF, ConstInfo("model/Step3Weights.tensor", 1, 1, 16, 0)),
            TCArgInfo("short int *__restrict__", "Step3Biases", ARG_SCOPE_GLOBAL, ARG_DIR_CONSTIN, AT_MEM_L3_HFLASH,
                      AT_MEM_UNDEF, ConstInfo("model/Step3Biases.tensor", 1, 1, 16, 0)),
            TCArgInfo("short int *__restrict__", "Output0", ARG_SCOPE_ARG, ARG_DIR_OUT, AT_MEM_UNDEF, AT_MEM_L2, 0)
        ),
        # Graph internal buffers between layers, allocated dynamically
        CArgs(3,
            TCArgInfo("short int *__restrict__", "OutputStep2", ARG_SCOPE_LOCAL, ARG_DIR_INOUT, AT_MEM_UNDEF,
                      AT_MEM_UNDEF, 0),
            TCArgInfo("short int *__restrict__", "OutputStep3", ARG_SCOPE_LOCAL, ARG_DIR_INOUT, AT_MEM_UNDEF,
                      AT_MEM_UNDEF, 0),
            TCArgInfo("short int *__restrict__", "OutputStep4", ARG_SCOPE_LOCAL, ARG_DIR_INOUT, AT_MEM_UNDEF,
                      AT_MEM_UNDEF, 0)
        )
    )
    # Node connections with arguments
    AddNode("Conv5x5ReLUMaxPool2x2_0",             # Name of the generated layer
            Bindings(4,                             # its C arguments, in order
                GNodeArg(GNA_IN, "Input0", 0),          # short int * __restrict__ In,
                GNodeArg(GNA_IN, "Step1Weights", 0),    # short int * __restrict__ Filter,
                GNodeArg(GNA_IN, "Step1Biases", 0),     # short int * __restrict__ Bias,
                GNodeArg(GNA_OUT, "OutputStep2", 0)     # short int * __restrict__ Out
            )
    )
    AddNode("Conv5x5ReLUMaxPool2x2_1", Bindings(4, GNodeArg(GNA_IN, "OutputStep2", 0),
            GNodeArg(GNA_IN, "Step2Weights", 0), GNodeArg(GNA_IN, "Step2Biases", 0),
            GNodeArg(GNA_OUT, "OutputStep3", 0)))
    AddNode("LinearLayerReLU_0", Bindings(4, GNodeArg(GNA_IN, "OutputStep3", 0), GNodeArg(GNA_IN, "Step3Weights", 0),
            GNodeArg(GNA_IN, "Step3Biases", 0), GNodeArg(GNA_OUT, "OutputStep4", 0)))
    AddNode("SoftMax_0", Bindings(2, GNodeArg(GNA_IN, "OutputStep4", 0), GNodeArg(GNA_OUT, "Output0", 0)))
    # Close Graph creation
    CloseGraph()


def main(argv=None):
    argv = sys.argv if argv is None else argv
    if TilerParseOptions(argv):
        print("Failed to initialize or incorrect output arguments directory.", file=sys.stderr)
        return 1
    # not in the guide's listing (it runs GenMnist from this directory): the ConstInfo paths are
    # relative to this script wherever it is run from (-c DIR overrides it)
    SetConstDir(os.path.dirname(os.path.abspath(__file__)))
    MnistModel(48000, 300 * 1024, 8 * 1024 * 1024, 20 * 1024 * 1024)
    GenerateTilingCode()
    return 0


if __name__ == "__main__":
    sys.exit(main())
