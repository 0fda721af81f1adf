"""Reference graphs for the planner's tests and benchmark: the buffers of small MobileNet-,
ResNet-, Inception- and U-Net-like networks (int8 activations, one byte per element).

A graph is declared as nodes in execution order, each reading tensors and writing one; a
concatenation is a stacked tensor (its inputs written side by side into one buffer, as the
original's ``AddStackedTensors``), resolved by :func:`autotiler.graph.plan.merge_aliases`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from .plan import Buffer, merge_aliases


@dataclass
class Dag:
    """A graph under construction: tensors, the nodes that write and read them, concatenations."""

    sizes: dict[str, int] = field(default_factory=dict)
    producer: dict[str, int] = field(default_factory=dict)   # tensor -> node writing it
    readers: dict[str, list[int]] = field(default_factory=dict)
    stacks: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)

    def input(self, name: str, size: int) -> str:
        self.sizes[name] = size
        self.producer[name] = 0   # graph inputs are in place before the first node
        return name

    def op(self, name: str, inputs: Sequence[str], size: int) -> str:
        """A node reading ``inputs`` and writing a tensor named after it."""
        node = len(self.nodes)
        self.nodes.append(name)
        for t in inputs:
            self.readers.setdefault(t, []).append(node)
        self.sizes[name] = size
        self.producer[name] = node
        return name

    def concat(self, name: str, parts: Sequence[str]) -> str:
        """``parts`` written side by side: no node, no copy."""
        self.stacks.append((name, tuple(parts)))
        return name

    def buffers(self) -> tuple[Buffer, ...]:
        """One buffer per tensor (concatenations merged with their parts): alive from the node
        writing it to the last node reading it; a tensor nobody reads is a graph output, alive
        to the end."""
        end = len(self.nodes) - 1
        stacked = {p for _, parts in self.stacks for p in parts}
        parts = []
        for t, size in self.sizes.items():
            first = self.producer[t]
            last = max(self.readers.get(t, []), default=end if t not in stacked else first)
            parts.append((t, size, first, last))
        for parent, _ in self.stacks:   # a concatenation's readers keep the whole stack alive
            if parent in self.readers:
                parts.append((f"{parent}.use", 0, min(self.readers[parent]), max(self.readers[parent])))
        aliases = [(parent, f"{parent}.use") for parent, _ in self.stacks if parent in self.readers]
        return merge_aliases(parts, aliases=aliases, stacks=self.stacks).buffers


def chain(sizes: Sequence[int]) -> tuple[Buffer, ...]:
    """Node i reads buffer i and writes buffer i + 1 (buffer 0 is the graph input)."""
    return tuple(Buffer(f"t{i}", s, max(i - 1, 0), i if i < len(sizes) - 1 else max(i - 1, 0))
                 for i, s in enumerate(sizes))


def mobilenet_like(side: int = 96) -> tuple[Buffer, ...]:
    g = Dag()
    x = g.input("in", side * side * 3)
    s, c = side // 2, 16
    x = g.op("conv0", [x], s * s * c)
    for i, (cout, stride) in enumerate([(32, 1), (64, 2), (64, 1), (128, 2), (128, 1), (256, 2), (256, 1)]):
        s //= stride
        x = g.op(f"dw{i}", [x], s * s * c)
        x = g.op(f"pw{i}", [x], s * s * cout)
        c = cout
    x = g.op("pool", [x], c)
    g.op("fc", [x], 10)
    return g.buffers()


def resnet_like(side: int = 32) -> tuple[Buffer, ...]:
    g = Dag()
    x = g.input("in", side * side * 3)
    s, c = side, 16
    x = g.op("stem", [x], s * s * c)
    for stage, cout in enumerate([16, 32, 64]):
        for block in range(2):
            stride = 2 if block == 0 and stage > 0 else 1
            s //= stride
            y = g.op(f"s{stage}b{block}c1", [x], s * s * cout)
            y = g.op(f"s{stage}b{block}c2", [y], s * s * cout)
            short = x if stride == 1 and cout == c else g.op(f"s{stage}b{block}down", [x], s * s * cout)
            x = g.op(f"s{stage}b{block}add", [y, short], s * s * cout)
            c = cout
    x = g.op("pool", [x], c)
    g.op("fc", [x], 10)
    return g.buffers()


def inception_like(side: int = 28) -> tuple[Buffer, ...]:
    g = Dag()
    x = g.op("stem", [g.input("in", side * side * 3)], side * side * 64)
    for m, (c1, c3r, c3, c5r, c5, cp) in enumerate([(16, 24, 32, 4, 8, 8), (32, 32, 48, 8, 24, 16),
                                                     (48, 24, 52, 4, 12, 16)]):
        b1 = g.op(f"m{m}_1x1", [x], side * side * c1)
        b3 = g.op(f"m{m}_3x3", [g.op(f"m{m}_3x3r", [x], side * side * c3r)], side * side * c3)
        b5 = g.op(f"m{m}_5x5", [g.op(f"m{m}_5x5r", [x], side * side * c5r)], side * side * c5)
        bp = g.op(f"m{m}_proj", [g.op(f"m{m}_pool", [x], side * side * x_channels(g, x, side))],
                  side * side * cp)
        x = g.concat(f"m{m}_cat", [b1, b3, b5, bp])
    g.op("fc", [g.op("pool", [x], 128)], 10)
    return g.buffers()


def x_channels(g: Dag, tensor: str, side: int) -> int:
    """Channels of a tensor (plain or concatenated) of ``side`` x ``side`` pixels."""
    stack = dict(g.stacks)
    if tensor in stack:
        return sum(x_channels(g, p, side) for p in stack[tensor])
    return g.sizes[tensor] // (side * side)


def unet_like(side: int = 64) -> tuple[Buffer, ...]:
    g = Dag()
    x = g.input("in", side * side * 1)
    skips, s, c = [], side, 8
    for level in range(3):
        x = g.op(f"enc{level}a", [x], s * s * c)
        x = g.op(f"enc{level}b", [x], s * s * c)
        skips.append((x, s, c))
        s //= 2
        x = g.op(f"down{level}", [x], s * s * c)
        c *= 2
    x = g.op("bottleneck", [x], s * s * c)
    for level in reversed(range(3)):
        skip, s, c = skips[level]
        up = g.op(f"up{level}", [x], s * s * c)
        cat = g.concat(f"cat{level}", [up, skip])
        x = g.op(f"dec{level}a", [cat], s * s * c)
        x = g.op(f"dec{level}b", [x], s * s * c)
    g.op("head", [x], side * side * 2)
    return g.buffers()


def zoo() -> dict[str, tuple[Buffer, ...]]:
    """The reference graphs by name."""
    return {
        "chain": chain([3072, 8192, 4096, 16384, 2048, 6144, 1024, 12288, 512]),
        "mobilenet": mobilenet_like(),
        "resnet": resnet_like(),
        "inception": inception_like(),
        "unet": unet_like(),
        "random_a": random_dag(3, 40),   # greedy orders reach 1.11x the bound here, hill climbing 1.0
        "random_b": random_dag(1, 40),
    }


def random_dag(seed: int, nodes: int = 40, max_inputs: int = 3, window: int = 6) -> tuple[Buffer, ...]:
    """A seeded random network: each node reads 1..``max_inputs`` tensors among the last
    ``window`` written (skip connections of varying length), and writes 1..64 KiB."""
    rng = random.Random(seed)
    g = Dag()
    tensors = [g.input("in", rng.randint(1, 64) * 1024)]
    for i in range(nodes):
        recent = tensors[-window:]
        inputs = rng.sample(recent, min(len(recent), rng.randint(1, max_inputs)))
        tensors.append(g.op(f"n{i}", inputs, rng.randint(1, 64) * 1024))
    return g.buffers()
