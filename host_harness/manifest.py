"""Read the manifests the generator writes next to generated C (``autotiler-manifest/1``).

A manifest says which C files to compile, which header declares the user kernels, how the L1
and L2 memory symbols are defined (a pointer the harness allocates, or a static array it
registers), the C signature of every user kernel, where each pointer argument lives (``"home":
"L2"``, the default, or ``"L3"``) and, under ``"l3": {"devices": [{"family": "HYPERRAM",
"symbol": "HyperRam"}]}``, the L3 RAM devices the generated code uses (the harness defines and
opens them around every call).

Each argument also says what the runner checks before a call: ``"elem"``, the C element type (the
pointee of a pointer, typedefs resolved), ``"dtype"``, the little-endian numpy dtype of it (null:
none), and for a pointer ``"shape"`` (items, outer to inner; null: unknown), ``"items"`` (null:
unknown) and ``"direction"`` (in, out, inout or null). ``"set": {"id": ..., "files": {name:
sha256}}`` lists every generated file of the manifest's generation: a directory whose files do
not match (an interrupted generation, files of two generations, an edited file) is refused.
Manifests without these fields (hand-written ones) are read as before, unchecked.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np

from autotiler.codegen.files import OutputLockTimeout, RecoveryError, output_lock, settle
from autotiler.constants import AT_MemLocation_T
from autotiler.errors import HarnessError, print_warning

MANIFEST_FORMAT = "autotiler-manifest/1"
HOMES = ("L2", "L3")
# at_api.h RAM families -> the AT_MEM_L3_* location their AT_<DEV>_CONF_INIT is given.
L3_FAMILIES = {"HYPERRAM": AT_MemLocation_T.AT_MEM_L3_HRAM, "QSPIRAM": AT_MemLocation_T.AT_MEM_L3_QSPIRAM,
               "OSPIRAM": AT_MemLocation_T.AT_MEM_L3_OSPIRAM,
               "DEFAULTRAM": AT_MemLocation_T.AT_MEM_L3_DEFAULTRAM}


DIRECTIONS = ("in", "out", "inout")


@dataclass(frozen=True)
class ArgSpec:
    name: str
    ctype: str
    pointer: bool
    is_float: bool
    home: str = "L2"  # memory level the runner places a pointer argument in
    elem: Optional[str] = None       # C element type (pointee of a pointer); None: not in the manifest
    dtype: Optional[str] = None      # its numpy dtype ("<i4"); None: not checked
    shape: Optional[tuple] = None    # items, outer to inner; None: not checked
    items: Optional[int] = None      # None: not checked
    direction: Optional[str] = None  # in / out / inout; None: unknown

    def to_dict(self) -> dict:
        return {"name": self.name, "ctype": self.ctype, "pointer": self.pointer, "float": self.is_float,
                "home": self.home, "elem": self.elem, "dtype": self.dtype,
                "shape": list(self.shape) if self.shape is not None else None, "items": self.items,
                "direction": self.direction}


@dataclass(frozen=True)
class L3Device:
    """An ``AT_<family>_T <symbol>;`` the trampoline defines and opens around every call."""

    family: str
    symbol: str


@dataclass(frozen=True)
class MemSymbol:
    """``L1_Memory`` / ``L2_Memory``: size 0 means the symbol does not exist."""

    symbol: str
    size: int
    dynamic: bool


@dataclass(frozen=True)
class KernelSpec:
    name: str
    args: tuple[ArgSpec, ...]
    header: str
    l1: MemSymbol
    l2: MemSymbol
    devices: tuple[L3Device, ...] = ()  # the L3 devices of the kernel's manifest

    @property
    def arg_names(self) -> list[str]:
        return [a.name for a in self.args]

    def to_dict(self) -> dict:
        """What a sanitizer child process needs to run the kernel (JSON-able)."""
        return {"name": self.name, "header": self.header, "args": [a.to_dict() for a in self.args]}

    @classmethod
    def from_dict(cls, data: dict) -> KernelSpec:
        args = tuple(_arg(a, "kernel arg") for a in data["args"])
        unused = MemSymbol("", 0, True)
        return cls(data["name"], args, data["header"], unused, unused)


@dataclass(frozen=True)
class GraphSpec:
    """A generated graph: ``<name>_Construct()``, ``<name>(args)``, ``<name>_Destruct()``,
    ``<name>_Memory(Which)`` (their parameters per ``warm``, the graph's AT_GRAPH_WARM_CONSTRUCT); ``sizes`` the bytes its constructor allocates per memory ("L1",
    "L2", "L2_DYN", ...); ``flash_files`` the flash images its constructor opens (none: no
    constants); ``flash_file`` their names joined by ", " for messages (None: none). The
    runner's arguments are checked like a kernel's (``name``, ``args``, ``arg_names``)."""

    name: str
    args: tuple[ArgSpec, ...]
    construct: str
    destruct: str
    memory: str
    sizes: dict
    flash_files: tuple[str, ...] = ()
    warm: int = 0   # AT_GRAPH_WARM_CONSTRUCT: 0 (none), 1 WARM_L1, 2 WARM_L2_DYN_L1, 3 WARM_ALL
    nodes: tuple = ()   # the names of the nodes (their user kernels or groups), in execution order
    reentrant: bool = False   # -R: Construct(Descr) + AllocCtxt, a runner taking the context and yielding

    @property
    def flash_file(self) -> Optional[str]:
        return ", ".join(self.flash_files) or None

    @property
    def arg_names(self) -> list[str]:
        return [a.name for a in self.args]


@dataclass(frozen=True)
class Manifest:
    path: Path
    c_files: tuple[Path, ...]
    header: str
    kernels: tuple[KernelSpec, ...]
    devices: tuple[L3Device, ...] = ()
    graphs: tuple[GraphSpec, ...] = ()
    # the C functions that are user kernels (not groups): the callable ones and a graph's node
    # variants (the manifest's tilings)
    user_kernels: tuple[str, ...] = ()
    # files of the generation that differ from it, accepted with allow_edits (hand edits)
    edited: tuple[str, ...] = ()


def _field(data: dict, key: str, kind, where: str):
    if key not in data:
        raise HarnessError(f"{where}: missing field '{key}'")
    value = data[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise HarnessError(f"{where}: field '{key}' must be {getattr(kind, '__name__', kind)}")
    return value


def _mem_symbol(data: dict | None, default_name: str, where: str) -> MemSymbol:
    if not data:
        return MemSymbol(default_name, 0, True)
    return MemSymbol(symbol=_field(data, "symbol", str, where), size=_field(data, "size", int, where),
                     dynamic=bool(data.get("dynamic", True)))


def _arg(data: dict, where: str) -> ArgSpec:
    name = _field(data, "name", str, where)
    pointer = bool(data.get("pointer", False))
    home = data.get("home", "L2")
    if home not in HOMES:
        raise HarnessError(f"{where} '{name}': field 'home' must be one of {', '.join(HOMES)}, got {home!r}")
    if home != "L2" and not pointer:
        raise HarnessError(f"{where} '{name}': home {home} needs a pointer argument")
    where = f"{where} '{name}'"
    return ArgSpec(name=name, ctype=_field(data, "ctype", str, where), pointer=pointer,
                   is_float=bool(data.get("float", False)), home=home, elem=_optional(data, "elem", str, where),
                   dtype=_dtype(data, where), shape=_shape(data, where), items=_items(data, where),
                   direction=_direction(data, where))


def _optional(data: dict, key: str, kind, where: str):
    return None if data.get(key) is None else _field(data, key, kind, where)


def _dtype(data: dict, where: str) -> Optional[str]:
    text = _optional(data, "dtype", str, where)
    if text is None:
        return None
    try:
        dtype = np.dtype(text)
    except TypeError:
        dtype = None
    if dtype is None or dtype.kind not in "biuf" or dtype.byteorder == ">":
        raise HarnessError(f"{where}: field 'dtype' must be a little-endian numeric numpy dtype, got {text!r}")
    return text


def _shape(data: dict, where: str) -> Optional[tuple]:
    shape = _optional(data, "shape", list, where)
    if shape is not None and not all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in shape):
        raise HarnessError(f"{where}: field 'shape' must be a list of positive ints, got {shape!r}")
    return None if shape is None else tuple(shape)


def _items(data: dict, where: str) -> Optional[int]:
    items = _optional(data, "items", int, where)
    shape = data.get("shape")
    if items is not None and (items < 0 or (isinstance(shape, list) and shape and items != int(np.prod(shape)))):
        raise HarnessError(f"{where}: field 'items' must be the item count of 'shape', got {items}")
    return items


def _direction(data: dict, where: str) -> Optional[str]:
    direction = data.get("direction")
    if direction is not None and direction not in DIRECTIONS:
        raise HarnessError(f"{where}: field 'direction' must be one of {', '.join(DIRECTIONS)} or null, "
                           f"got {direction!r}")
    return direction


def _devices(data, where: str) -> tuple[L3Device, ...]:
    """The ``"l3": {"devices": [...]}`` section; symbols unique, families known."""
    if data is None:
        return ()
    if not isinstance(data, dict):
        raise HarnessError(f"{where}: field 'l3' must be dict")
    devices: dict[str, L3Device] = {}
    for d in _field(data, "devices", list, f"{where} l3"):
        if not isinstance(d, dict):
            raise HarnessError(f"{where} l3 devices: each device must be dict")
        family = _field(d, "family", str, f"{where} l3 device")
        symbol = _field(d, "symbol", str, f"{where} l3 device")
        if family not in L3_FAMILIES:
            raise HarnessError(f"{where} l3 device '{symbol}': unknown family {family!r}",
                               hint=f"families are {', '.join(L3_FAMILIES)}")
        if not symbol.isidentifier() or not symbol.isascii():
            raise HarnessError(f"{where} l3 device: symbol {symbol!r} is not a C identifier")
        if devices.setdefault(symbol, L3Device(family, symbol)).family != family:
            raise HarnessError(f"{where} l3 devices: '{symbol}' is listed as {devices[symbol].family} "
                               f"and as {family}")
    return tuple(devices.values())


def _check_set(path: Path, data: dict, where: str, allow_edits: bool = False) -> tuple:
    """Every file of the manifest's generation is there, with the bytes it was generated with;
    with ``allow_edits``, files changed since (edited by hand) are accepted and returned."""
    if data.get("set") is None:
        return ()
    gen = _field(data, "set", dict, where)
    ident = _field(gen, "id", str, f"{where} set")
    files = _field(gen, "files", dict, f"{where} set")
    missing, changed = [], []
    for name, digest in sorted(files.items()):
        file = path.parent / name
        if not isinstance(digest, str) or "/" in name or name.startswith("."):
            raise HarnessError(f"{where} set: file {name!r} must map a plain file name to a sha256")
        if not file.is_file():
            missing.append(name)
        elif hashlib.sha256(file.read_bytes()).hexdigest() != digest:
            changed.append(name)
    bad = [f"{n} (missing)" for n in missing] + ([] if allow_edits else [f"{n} (changed)" for n in changed])
    if bad:
        edits = " (or, to build files you edited on purpose: build(..., allow_edits=True), autotiler build " \
                "--allow-edits)" if changed and not allow_edits else ""
        raise HarnessError(f"{where} describes generation {ident[:12]} but {', '.join(sorted(bad))} "
                           f"{'is' if len(bad) == 1 else 'are'} not of it: the directory mixes generations "
                           "(an interrupted or concurrent generation, files copied in or edited by hand)",
                           hint=f"regenerate: run the model script again with -o {path.parent}{edits}")
    return tuple(changed)


def _parse(path: Path, data: dict, allow_edits: bool = False) -> Manifest:
    where = f"manifest {path.name}"
    edited = _check_set(path, data, where, allow_edits)
    header = _field(data, "header", str, where)
    l1 = _mem_symbol(data.get("l1"), "L1_Memory", f"{where} l1")
    l2 = _mem_symbol(data.get("l2"), "L2_Memory", f"{where} l2")
    devices = _devices(data.get("l3"), where)
    kernels, user = [], []
    for k in _field(data, "kernels", list, where):
        name = _field(k, "name", str, f"{where} kernel")
        args = tuple(_arg(a, f"{where} kernel '{name}' arg") for a in _field(k, "args", list, where))
        kernels.append(KernelSpec(name, args, header, l1, l2, devices))
        if k.get("kind") != "group":
            user.append(name)
    tilings = data.get("tilings") or {}
    if not isinstance(tilings, dict):
        raise HarnessError(f"{where}: field 'tilings' must map user kernels to their tilings")
    c_files = tuple(path.parent / f for f in _field(data, "c_files", list, where))
    graphs = tuple(_graph(g, where) for g in data.get("graphs") or ())
    return Manifest(path, c_files, header, tuple(kernels), devices, graphs, tuple(dict.fromkeys(user + list(tilings))),
                    edited)


def _graph(data, where: str) -> GraphSpec:
    if not isinstance(data, dict):
        raise HarnessError(f"{where} graphs: each graph must be dict")
    name = _field(data, "name", str, f"{where} graph")
    here = f"{where} graph '{name}'"
    args = tuple(_arg(a, f"{here} arg") for a in _field(data, "args", list, here))
    sizes = _field(data, "sizes", dict, here)
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in sizes.values()):
        raise HarnessError(f"{here}: field 'sizes' must map memories to byte counts")
    flash = data.get("flash")   # the main flash device, one of ``flashes`` when that is given
    file = _field(flash, "file", str, f"{here} flash") if isinstance(flash, dict) else None
    flashes = data.get("flashes") or []
    if not isinstance(flashes, list) or not all(isinstance(f, dict) for f in flashes):
        raise HarnessError(f"{here}: field 'flashes' must be a list of flash devices")
    files = tuple(_field(f, "file", str, f"{here} flashes") for f in flashes) or ((file,) if file else ())
    warm = data.get("warm", 0)
    if warm not in (0, 1, 2, 3) or isinstance(warm, bool):
        raise HarnessError(f"{here}: field 'warm' must be 0, 1, 2 or 3 (AT_GRAPH_WARM_CONSTRUCT), got {warm!r}")
    nodes = data.get("nodes", [])
    if not isinstance(nodes, list) or not all(isinstance(n, str) for n in nodes):
        raise HarnessError(f"{here}: field 'nodes' must be a list of node names")
    reentrant = data.get("reentrant", False)
    if not isinstance(reentrant, bool):
        raise HarnessError(f"{here}: field 'reentrant' must be true or false, got {reentrant!r}")
    return GraphSpec(name, args, _field(data, "construct", str, here), _field(data, "destruct", str, here),
                     _field(data, "memory", str, here), dict(sizes), files, warm, tuple(nodes), reentrant)


def _load_json(path: Path):
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None  # not every *.json in gen_dir is ours


@contextlib.contextmanager
def locked_output(gen_dir: Path):
    """Finish or undo a generation killed in ``gen_dir`` (autotiler.codegen.files.recover), then
    hold the directory's shared lock: a generation into it waits until the block ends."""
    with contextlib.ExitStack() as stack:
        try:
            settle(str(gen_dir))
            stack.enter_context(output_lock(str(gen_dir), exclusive=False))
        except RecoveryError as err:
            raise HarnessError(f"{gen_dir}: a generation was interrupted and could not be finished or undone "
                               f"({err.strerror})", hint=f"check {err.path} (old/: the previous files), then "
                               "regenerate") from None
        except OutputLockTimeout as err:
            raise HarnessError(err.strerror, hint="wait for the generation to finish") from None
        yield


def read_manifests(gen_dir: Path, allow_edits: bool = False) -> list[Manifest]:
    """All manifests in ``gen_dir``; at least one, kernel names unique across them, each
    consistent with the files of its generation (``allow_edits``: or with those files edited
    since, each manifest's ``edited``)."""
    with locked_output(Path(gen_dir)):
        return read_manifests_unlocked(gen_dir, allow_edits)


def read_manifests_unlocked(gen_dir: Path, allow_edits: bool = False) -> list[Manifest]:
    """read_manifests for a caller holding :func:`locked_output`."""
    manifests = []
    for path in sorted(Path(gen_dir).glob("*.json")):
        data = _load_json(path)
        if isinstance(data, dict) and data.get("format") == MANIFEST_FORMAT:
            manifests.append(_parse(path, data, allow_edits))
    if not manifests:
        raise HarnessError(f"no '{MANIFEST_FORMAT}' manifest (*.json) in {gen_dir}",
                           hint="generate code first; the generator writes the manifest next to the C")
    _check_unique([k.name for m in manifests for k in m.kernels])
    _check_unique([g.name for m in manifests for g in m.graphs], "graph")
    return manifests


def report_edits(gen_dir: Path, manifests: list[Manifest]) -> None:
    """Say which files are built as edited by hand, not as generated (``allow_edits``): one
    warning line on stderr, at every build (not once per process, as a Python warning would)."""
    edited = sorted({name for m in manifests for name in m.edited})
    if edited:
        print_warning(f"{gen_dir}: building {', '.join(edited)} as edited by hand, not as generated (regenerate to "
                      "undo the edits)")


def _check_unique(names: list[str], what: str = "kernel") -> None:
    dups = sorted({n for n in names if names.count(n) > 1})
    if dups:
        raise HarnessError(f"{what}(s) {', '.join(dups)} declared by more than one manifest")
