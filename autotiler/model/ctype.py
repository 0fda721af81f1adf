"""C types given to ``TCArg``, parsed as C declarations (pycparser, which cffi brings).

A type that is not C is refused where it is declared rather than in gcc; a parsed type says how
many pointer levels it has and, where the base type is known, the size of what it points to, so
that a binding can be checked against the item size of the kernel argument it passes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Optional

from pycparser import c_ast, c_parser

# Sizes on the simulated chip and on GAP (the two agree for these; ``long`` does not: 8 bytes on
# the 64-bit host, 4 on GAP, so its size stays unknown and is never checked). ``f16`` is a 2-byte
# float on GAP but a float in the emulation headers: unknown too.
_SIZES = {
    "char": 1, "signed char": 1, "unsigned char": 1, "_Bool": 1,
    "short": 2, "signed short": 2, "unsigned short": 2,
    "int": 4, "signed": 4, "signed int": 4, "unsigned": 4, "unsigned int": 4,
    "long long": 8, "signed long long": 8, "unsigned long long": 8,
    "float": 4, "double": 8,
    "Word8": 1, "Wordu8": 1, "Word16": 2, "Wordu16": 2, "Word32": 4, "Wordu32": 4,
    "int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4, "uint32_t": 4,
    "int64_t": 8, "uint64_t": 8, "v2s": 4, "v2u": 4, "v4s": 4, "v4u": 4, "V2S": 8,
}
_FLOATS = {"float", "double", "long double", "f16", "f16a", "F16", "F16_DSP", "float16", "v2h", "v2ah"}
_TYPE_WORDS = {"void", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "_Bool", "_Complex",
               "const", "volatile", "restrict", "struct", "union", "enum"}
# gcc spellings pycparser does not know; attributes do not change the type's shape.
_GNU = ((re.compile(r"\b__restrict(__)?\b"), "restrict"), (re.compile(r"\b__const(__)?\b"), "const"),
        (re.compile(r"\b__volatile(__)?\b"), "volatile"), (re.compile(r"\b__inline(__)?\b"), ""),
        (re.compile(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)"), ""), (re.compile(r"\b__extension__\b"), ""))


class CTypeError(ValueError):
    """The text is not a C type usable for an argument; ``str()`` says why."""


@dataclass(frozen=True)
class CType:
    text: str
    pointers: int           # levels of pointer
    base: str               # the base type's specifiers, e.g. "unsigned int", "Word32", "struct S"
    base_size: Optional[int]  # bytes of the base type, None where not known here

    @property
    def item_size(self) -> Optional[int]:
        """Bytes of what a one-level pointer points to (None if unknown or not a pointer)."""
        return self.base_size if self.pointers == 1 else None

    @property
    def is_float(self) -> bool:
        return self.pointers == 0 and self.base in _FLOATS


@cache
def _parser() -> c_parser.CParser:
    return c_parser.CParser()


def _declaration(text: str) -> str:
    """A declaration of a variable ``__at_v`` of type ``text``, with its unknown identifiers
    declared as types (a user's struct typedef is not known here; it only needs to be a name)."""
    for pattern, repl in _GNU:
        text = pattern.sub(repl, text)
    names = {w for w in re.findall(r"[A-Za-z_]\w*", text) if w not in _TYPE_WORDS}
    typedefs = "".join(f"typedef int {n};" for n in sorted(names))
    decl = text.replace("(*)", "(*__at_v)", 1) if "(*)" in text else f"{text} __at_v"
    return f"{typedefs}\n{decl};"


def _shape(node) -> tuple:
    """(pointer levels, base specifiers) of a declarator; CTypeError for arrays and functions."""
    pointers = 0
    while True:
        if isinstance(node, c_ast.PtrDecl):
            pointers += 1
            node = node.type
        elif isinstance(node, c_ast.ArrayDecl):
            raise CTypeError("is an array type; a C argument of array type is a pointer: write 'T *'")
        elif isinstance(node, c_ast.FuncDecl):
            if pointers == 0:
                raise CTypeError("is a function type; pass a function pointer 'T (*)(...)'")
            return pointers, "function"
        elif isinstance(node, c_ast.TypeDecl):
            inner = node.type
            if isinstance(inner, c_ast.IdentifierType):
                return pointers, " ".join(inner.names)
            kind = type(inner).__name__.lower()
            return pointers, f"{kind} {inner.name or ''}".strip()
        else:
            raise CTypeError("is not a type")


_BUILTIN = {tuple(sorted(t.split())) for t in (
    "void", "char", "signed char", "unsigned char", "_Bool", "float", "double", "long double",
    *(f"{sign}{size}{tail}" for sign in ("", "signed ", "unsigned ") for size in ("short", "long", "long long")
      for tail in ("", " int")), "int", "signed", "signed int", "unsigned", "unsigned int")}
_BUILTIN_WORDS = {w for t in _BUILTIN for w in t}


def _check_specifiers(base: str) -> None:
    """pycparser accepts any mix of type words ('unsigned float'); C does not."""
    words = base.split()
    if any(w in _BUILTIN_WORDS for w in words) and tuple(sorted(words)) not in _BUILTIN:
        raise CTypeError(f"is not a C type ('{base}' is no combination of type specifiers)")


_ORDER = ("void", "_Bool", "char", "short", "long", "int", "float", "double")


def _canonical(base: str) -> str:
    """One spelling per builtin type: 'int short unsigned' is 'unsigned short'."""
    words = base.split()
    if not set(words) <= _BUILTIN_WORDS:
        return base
    sign = [w for w in words if w in ("signed", "unsigned")]
    core = [w for w in words if w not in ("signed", "unsigned")]
    if "int" in core and len(core) > 1:
        core.remove("int")
    if not core:
        core = ["int"] if sign == ["unsigned"] else []
    return " ".join(sign + sorted(core, key=_ORDER.index))


@cache
def parse_ctype(text: str) -> CType:
    """Parse a TCArg type; CTypeError saying why when it is not one C type."""
    if not isinstance(text, str) or not text.strip():
        raise CTypeError("is empty")
    try:
        ast = _parser().parse(_declaration(text), filename="<TCArg>")
    except Exception as err:  # pycparser raises ParseError, and plain errors on some garbage
        reason = str(err).split(": ", 2)[-1] if ":" in str(err) else str(err)
        if "previously declared as typedef" in reason:
            reason = "a name follows the type: give the type only"
        raise CTypeError(f"is not a C type ({reason})") from None
    decls = [d for d in ast.ext if isinstance(d, c_ast.Decl) and d.name == "__at_v"]
    if len(decls) != 1 or len(ast.ext) != len(decls) + sum(isinstance(d, c_ast.Typedef) for d in ast.ext):
        raise CTypeError("is not one C type")
    pointers, base = _shape(decls[0].type)
    _check_specifiers(base)
    base = _canonical(base)
    return CType(" ".join(text.split()), pointers, base, _SIZES.get(base))


__all__ = ["CType", "CTypeError", "parse_ctype"]
