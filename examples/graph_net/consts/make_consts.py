"""Writes the constants of examples/graph_net (deterministic: the same bytes on every run).

* ``F1.f32``: Conv1's filters as IEEE float32 (little-endian), about N(0, 0.08): the model reads
  them with ``ConstInfo("F1.f32", 0, 1, 16, 8)``, i.e. converted to Q8 int16
  (``clip(rint(v * 256))``);
* ``F2.q8`` .. ``F5.q8``: the other filters, int16 Q8 little-endian, stored as they are;
* ``B1.txt``: Conv1's biases as text (int16 Q11 values separated by white space);
* ``B2.q11`` .. ``B5.q11``: the other biases, int16 Q11 little-endian.

Run: ``python examples/graph_net/consts/make_consts.py`` (rewrites the files next to it).
"""

from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
# (name, output features, input features) of each convolution, 3x3 filters
CONVS = (("1", 8, 4), ("2", 4, 8), ("3", 4, 8), ("4", 8, 8), ("5", 4, 8))


def main() -> None:
    rng = np.random.default_rng(2024)
    for name, n_out, n_in in CONVS:
        shape = (n_out, n_in, 3, 3)
        if name == "1":
            rng.normal(0.0, 0.08, size=shape).astype("<f4").tofile(HERE / "F1.f32")
        else:
            rng.integers(-24, 25, size=shape).astype("<i2").tofile(HERE / f"F{name}.q8")
        bias = rng.integers(-512, 513, size=n_out)
        if name == "1":
            (HERE / "B1.txt").write_text(" ".join(str(int(b)) for b in bias) + "\n")
        else:
            bias.astype("<i2").tofile(HERE / f"B{name}.q11")


if __name__ == "__main__":
    main()
