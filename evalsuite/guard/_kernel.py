"""Compiled screening kernel: word hashes, n-gram hashes and the bit filter in one pass.

`match_batch` (``_match.py``) turns a normalised buffer into word hashes, rolls them into
n-gram and short-text-head hashes, and keeps the few that pass the index's bit filter. With
numpy that is a dozen passes over arrays eight times the size of the text; here one loop,
compiled by numba (LLVM), does it all without temporaries. The hashes are the same, bit for
bit: a word's hash is ``fmix64`` of the polynomial ``h = h * WORD_PRIME + byte`` over its
bytes (what `fast_word_hashes` computes from prefix sums), an n-gram's is the polynomial
``acc = acc * NGRAM_PRIME + word_hash`` over its words (`ngram_hashes`). The numpy path stays
as the reference and the fallback when numba cannot be imported (`available`); the tests
compare the two on random text (tests/guard/test_kernel.py).

For spec /3, `prepared_kernel` also does the spec's last step: it reads the bytes of
`evalsuite._core.text.prepare_batch_v3` (escapes, markers and non-ASCII lines done; case,
punctuation and white space left) through `byte_tables`, so the normalised buffer is never
written; `steps` are the compiled byte passes that find and blank escapes and markers and
splice the non-ASCII lines. The tests compare them with `normalise_batch_v3` and `words_v3`
on adversarial text (tests/guard/test_fused.py).

numba is imported on the first screen, never at start-up, and compiled code is cached
beside this file (``__pycache__``) when that directory is writable.
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from evalsuite._core.text import WORD_PRIME, ByteSteps, separator_classes

__all__ = [
    "DISABLE_ENV",
    "Kernel",
    "PreparedKernel",
    "available",
    "byte_tables",
    "kernel",
    "prepared_kernel",
    "steps",
]

DISABLE_ENV = "EVALSUITE_GUARD_NO_JIT"
"""Set to ``1`` to screen with the numpy path (the reference) instead of the compiled kernel."""

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]

Kernel = Callable[..., tuple[U64, I64, I64, U64, I64, U64]]
"""``(buffer, n, m, gram_table, gram_shift, gram_packed, head_table, head_shift,
head_packed)`` -> (word hashes, word starts, candidate n-gram positions and hashes,
candidate head positions and hashes); ``m = 0`` for an index without short texts (no
heads)."""

PreparedKernel = Callable[..., tuple[U64, I64, I64, I64, U64, I64, U64]]
"""``(data, mul, add, flags, separator, n_docs, n, m, gram_table, gram_shift, gram_packed,
head_table, head_shift, head_packed)`` -> (word hashes, first word of each document then the
number of words, end of each document in `data`, candidate n-gram positions and hashes,
candidate head positions and hashes; none for ``m = 0``): the last step of spec /3 fused into
the word pass (`evalsuite._core.text.PreparedBatch`)."""


@functools.cache
def kernel() -> Kernel | None:
    """The compiled kernel, or None when numba is missing or `DISABLE_ENV` is set."""
    if os.environ.get(DISABLE_ENV, "") not in ("", "0"):
        return None
    try:
        jit = importlib.import_module("evalsuite.guard._jit")
    except ImportError:  # numba missing, or its llvmlite does not load
        return None
    screen: Kernel = jit.screen
    return screen


def _compiled(name: str) -> Any:
    """The compiled function `name` of ``evalsuite.guard._jit``, or None as for `kernel`.

    `kernel`'s cache decides: clearing it (as the tests and the benchmark do) switches all.
    """
    if kernel() is None:
        return None
    return getattr(importlib.import_module("evalsuite.guard._jit"), name)


def prepared_kernel() -> PreparedKernel | None:
    """The compiled spec /3 kernel (`PreparedKernel`), or None as for `kernel`."""
    found: PreparedKernel | None = _compiled("screen_prepared")
    return found


def steps() -> ByteSteps | None:
    """The compiled byte passes of spec /3, or None as for `kernel`.

    An `evalsuite._core.text.ByteSteps` with the results of
    `evalsuite._core.text.NUMPY_STEPS`.
    """
    if kernel() is None:
        return None
    return _steps()


@functools.cache
def _steps() -> ByteSteps:
    jit = importlib.import_module("evalsuite.guard._jit")
    return ByteSteps(jit.scan, jit.blank, jit.gather, jit.splice, regions=False)


@functools.cache
def byte_tables(separator: int) -> tuple[U64, U64, U64]:
    """(mul, add, flags) of the spec /3 kernel's word pass for a batch separator.

    From `evalsuite._core.text.PreparedBatch.classes`: a kept byte steps the hash
    (``h * WORD_PRIME + byte``, flag 2), a deleted byte leaves it (``h * 1 + 0``, flag 0),
    white space and the separator end the word (``h * 0 + 0``, flag 1).
    """
    classes = separator_classes(separator).astype(np.int64)
    kept = (classes > 0) & (classes < 256)
    mul = np.where(kept, np.uint64(WORD_PRIME), np.uint64(0)).astype(np.uint64)
    mul[classes < 0] = 1
    add = np.where(kept, classes, 0).astype(np.uint64)
    flags = np.where(kept, 2, np.where(classes < 0, 0, 1)).astype(np.uint64)
    for table in (mul, add, flags):
        table.flags.writeable = False
    return mul, add, flags


def available() -> bool:
    """True when screens use the compiled kernel."""
    return kernel() is not None
