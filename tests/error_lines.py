"""Matching a typed error to the test line that raised it: its one-line rendering starts with
``FILE:LINE: kernel 'K', argument 'A': `` (autotiler.errors.render)."""

from __future__ import annotations

import contextlib
import linecache
import re
import sys

import pytest


def with_body_line(line: int = 1, depth: int = 2) -> int:
    """The number of the ``line``-th line of the ``with`` body in which the function ``depth``
    frames up (the caller's caller, by default: a test calling a ``fails`` helper) stands."""
    frame = sys._getframe(depth)
    at = frame.f_lineno
    while not linecache.getline(frame.f_code.co_filename, at).rstrip().endswith(":"):
        at += 1
    return at + line


@contextlib.contextmanager
def rendered(exc, this: str, at: int, fragments, kernel=None, arg=None, exact: bool = False):
    """pytest.raises(exc) matching ``this:at: kernel 'K', argument 'A': `` then the fragments in order;
    ``exact``: the error's ``kernel`` and ``arg`` fields are exactly those given, too."""
    subject = ([f"kernel '{kernel}'"] if kernel else []) + ([f"argument '{arg}'"] if arg else [])
    prefix = f"{this}:{at}: " + (", ".join(subject) + ": " if subject else "")
    with pytest.raises(exc, match=re.escape(prefix) + ".*" + ".*".join(re.escape(f) for f in fragments)) as info:
        yield info
    if exact:
        assert (info.value.kernel, info.value.arg) == (kernel, arg)
