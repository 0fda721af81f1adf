"""Host harness: compile generated user kernels against a simulated GAP chip and run them.

``build(gen_dir, sources=[...])`` compiles the generated C named by the manifest(s) in
``gen_dir`` together with the user's basic kernels and the simulator runtime (``runtime/``),
and returns a :class:`Program`; ``Program.call(kernel, **arrays_and_scalars)`` runs one user
kernel on numpy arrays and returns the simulator's counters (bytes moved, peak memory, cycles);
``Program.graph(name)`` gives a generated graph (construct, run, memory, destruct).
"""

from .builder import build
from .runner import Graph, Program

__all__ = ["Graph", "Program", "build"]
