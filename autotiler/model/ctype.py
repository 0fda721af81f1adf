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

# Gap.h's typedefs (and <stdint.h>'s) as the host compiles them (LP64, little-endian; f16 is gcc's
# _Float16, IEEE binary16 as on GAP9; f16a, bfloat16 on GAP9, is a float: gcc 12 has no bfloat16
# arithmetic), and its vector types by their lane type.
_TYPEDEFS = {
    "Word8": "signed char", "Wordu8": "unsigned char", "Word16": "short int", "Wordu16": "unsigned short int",
    "Word32": "int", "Wordu32": "unsigned int", "int8_t": "signed char", "uint8_t": "unsigned char",
    "int16_t": "short int", "uint16_t": "unsigned short int", "int32_t": "int", "uint32_t": "unsigned int",
    "int64_t": "long int", "uint64_t": "unsigned long int", "f16": "_Float16", "f16a": "float",
}
VECTORS = {"v2s": "short int", "v4s": "signed char", "v2u": "unsigned short int", "v4u": "unsigned char",
           "v2h": "_Float16", "v2ah": "float", "V2S": "short int"}
# Bytes on GAP of a vector, where the host's are the same (v2ah: 8 here, 4 on GAP, so unknown).
_VECTOR_BYTES = {"v2s": 4, "v4s": 4, "v2u": 4, "v4u": 4, "v2h": 4, "V2S": 4}
DTYPES = {
    "char": "|i1", "signed char": "|i1", "unsigned char": "|u1", "_Bool": "|b1", "short int": "<i2",
    "unsigned short int": "<u2", "int": "<i4", "unsigned int": "<u4", "long int": "<i8", "unsigned long int": "<u8",
    "long long int": "<i8", "unsigned long long int": "<u8", "_Float16": "<f2", "float": "<f4", "double": "<f8",
}
# Bytes on GAP of the element types whose size the host shares: ``long`` (8 bytes on the host, 4 on
# GAP) and ``f16a`` (a float here, 2 bytes on GAP) stay unknown, so they are never checked.
_GAP_SIZES = {e: int(d[2]) for e, d in DTYPES.items() if not e.startswith(("long", "unsigned long"))}
_FLOATS = {"float", "double", "long double", "_Float16", "f16", "f16a", "F16", "F16_DSP", "float16", "v2h",
           "v2ah"}
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
    base: str               # the base type: "unsigned short int", "Word32", "struct S", "function"

    @property
    def element(self) -> str:
        """The base type with Gap.h's typedefs resolved (a vector type stays itself)."""
        return _TYPEDEFS.get(self.base, self.base)

    @property
    def dtype(self) -> Optional[str]:
        """numpy dtype of the element (a vector's lanes), None where not a number type."""
        return DTYPES.get(VECTORS.get(self.element, self.element))

    @property
    def item_size(self) -> Optional[int]:
        """Bytes on GAP of what a one-level pointer points to (None if unknown or not a pointer)."""
        if self.pointers != 1 or self.base == "f16a":
            return None
        return _VECTOR_BYTES.get(self.element) or _GAP_SIZES.get(self.element)

    @property
    def is_float(self) -> bool:
        return self.pointers == 0 and (self.base in _FLOATS or self.element in _FLOATS)

    @property
    def float_data(self) -> bool:
        """A float scalar, or a pointer to floats (at any level)."""
        return self.base in _FLOATS or self.element in _FLOATS


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


def _canonical(base: str) -> str:
    """One spelling per builtin type, the one of C's standard: 'short unsigned' is
    'unsigned short int', 'signed' is 'int'."""
    words = base.split()
    if not set(words) <= _BUILTIN_WORDS:
        return base
    unsigned = "unsigned" in words
    rest = tuple(sorted(w for w in words if w not in ("signed", "unsigned", "int")))
    if rest == ("char",):
        return "unsigned char" if unsigned else "signed char" if "signed" in words else "char"
    sized = {(): "int", ("short",): "short int", ("long",): "long int", ("long", "long"): "long long int"}.get(rest)
    if rest == ("double", "long"):
        return "long double"
    if sized is None:
        return " ".join(rest)  # void, _Bool, float, double
    return ("unsigned " if unsigned else "") + sized


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
    return CType(" ".join(text.split()), pointers, base)


__all__ = ["CType", "CTypeError", "parse_ctype", "DTYPES", "VECTORS"]
