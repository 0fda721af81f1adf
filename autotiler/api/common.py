"""Helpers shared by the API functions: count-prefixed lists, enums, argument binding by the
original's parameter names, C type sizes."""

from __future__ import annotations

from typing import Optional

from ..errors import ModelError
from ..model.ir import DROPPED, caller_where

_MISSING = object()


def split_count(args: tuple) -> tuple:
    """``(3, a, b, c)`` -> ``(3, (a, b, c))``; ``(a, b)`` -> ``(None, (a, b))``; a single list
    or tuple is its items."""
    if args and isinstance(args[0], int) and not isinstance(args[0], bool):
        return args[0], args[1:]
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return None, tuple(args[0])
    return None, args


def counted(name: str, args: tuple, kind, where: str, kernel: Optional[str] = None) -> tuple:
    """Items of a count-prefixed list (``CArgs(3, a, b, c)``): the count, when given, must
    match; AT_NO_* placeholders count but are dropped; every other item must be a ``kind``."""
    count, items = split_count(args)
    if count is not None and count != len(items):
        raise ModelError(f"{name}({count}, ...) announces {count} item(s) but {len(items)} follow",
                         where=where, kernel=kernel, hint=f"write {name}({len(items)}, ...) or drop the count")
    out = []
    for item in items:
        if item is None:
            raise ModelError(f"{name}: an item is None (an AllocateXXX slot never filled?)", where=where,
                             kernel=kernel, hint="fill every slot, or use the AT_NO_* placeholder")
        if item in DROPPED:
            continue
        if kind is not None and not isinstance(item, kind):
            names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
            raise ModelError(f"{name} expects {names} items, got {item!r}", where=where, kernel=kernel,
                             hint="build each item with the matching function (e.g. TCArg for CArgs)")
        out.append(item)
    return tuple(out)


def enum(enum_type, value, what: str, where: str, kernel: Optional[str] = None):
    try:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError
        return enum_type(value)
    except ValueError:
        raise ModelError(f"{value!r} is not a valid {what}", where=where, kernel=kernel,
                         hint=f"use one of {', '.join(enum_type.__members__)}") from None


def bind(func: str, params: tuple, args: tuple, kwargs: dict, where: str, kernel: Optional[str] = None) -> dict:
    """Bind positional and keyword arguments to the original's parameter names; ``params`` is
    a tuple of names, or (name, default) pairs for optional ones."""
    names = [p if isinstance(p, str) else p[0] for p in params]
    if len(args) > len(names):
        raise ModelError(f"{func} takes {len(names)} argument(s), got {len(args)}", where=where, kernel=kernel,
                         hint=f"{func}({', '.join(names)})")
    out = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names:
            raise ModelError(f"{func} has no parameter '{k}'", where=where, kernel=kernel,
                             hint=f"{func}({', '.join(names)})")
        if k in out:
            raise ModelError(f"{func}: parameter '{k}' given twice", where=where, kernel=kernel)
        out[k] = v
    for p in params:
        name, default = (p, _MISSING) if isinstance(p, str) else p
        if name not in out:
            if default is _MISSING:
                raise ModelError(f"{func}: missing argument '{name}'", where=where, kernel=kernel,
                                 hint=f"{func}({', '.join(names)})")
            out[name] = default
    return out


def int_arg(value, what: str, where: str, kernel=None, arg=None, minimum: Optional[int] = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ModelError(f"{what} must be an integer, got {value!r}", where=where, kernel=kernel, arg=arg)
    if minimum is not None and value < minimum:
        raise ModelError(f"{what} must be at least {minimum}, got {value}", where=where, kernel=kernel, arg=arg)
    return int(value)


def name_or_none(value) -> Optional[str]:
    return None if value in (0, "", None) else value


C_SIZES = {
    "char": 1, "signed char": 1, "unsigned char": 1, "short": 2, "short int": 2, "unsigned short": 2,
    "unsigned short int": 2, "signed short": 2, "int": 4, "unsigned int": 4, "unsigned": 4, "signed int": 4,
    "long": 4, "unsigned long": 4, "long int": 4, "long long": 8, "unsigned long long": 8, "float": 4,
    "double": 8, "f16": 2, "f16a": 2, "Word8": 1, "Wordu8": 1, "Word16": 2, "Wordu16": 2, "Word32": 4,
    "Wordu32": 4, "v2s": 4, "v4s": 4, "v2u": 4, "v4u": 4, "v2h": 4, "v2ah": 4, "int8_t": 1, "uint8_t": 1,
    "int16_t": 2, "uint16_t": 2, "int32_t": 4, "uint32_t": 4, "int64_t": 8, "uint64_t": 8,
}


def sizeof(ctype: str) -> int:
    """Size in bytes of a C type on GAP (``sizeof("int")`` -> 4), for ported ``sizeof(...)``."""
    key = " ".join(str(ctype).split())
    if "*" in key:
        return 4
    if key not in C_SIZES:
        raise ModelError(f"sizeof: unknown C type '{ctype}'", where=caller_where(),
                         hint="pass the size in bytes instead")
    return C_SIZES[key]


__all__ = ["split_count", "counted", "enum", "bind", "int_arg", "name_or_none", "sizeof", "C_SIZES"]
