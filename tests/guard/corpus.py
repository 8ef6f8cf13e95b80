"""Offline public text for guard tests: docstring paragraphs of the installed stdlib.

Read with `ast` (nothing is imported), sorted, so the corpus is the same on every run of a
given Python build.
"""

from __future__ import annotations

import ast
import functools
import random
import sysconfig
from pathlib import Path

from evalsuite._core.text import ngram_hashes, normalise_words, word_hashes

STDLIB = Path(sysconfig.get_paths()["stdlib"])
MODULES = ("email", "json", "logging", "http", "asyncio", "unittest", "xml", "urllib")


_preloaded: list[tuple[str, ...]] = []
"""`paragraphs()` as another process of the test session read them (`preload`)."""


def preload(texts: list[str]) -> None:
    """Make `paragraphs()` return `texts`: what `read_paragraphs()` gave another process of
    the same session and Python (tests/guard/conftest.py shares them between xdist workers;
    parsing the stdlib costs about 1.5 s of CPU per process)."""
    _preloaded[:] = [tuple(texts)]


def paragraphs() -> tuple[str, ...]:
    """Distinct ASCII docstring paragraphs of a few stdlib packages (tens of thousands)."""
    return _preloaded[0] if _preloaded else read_paragraphs()


@functools.cache
def read_paragraphs() -> tuple[str, ...]:
    """`paragraphs()` read from the stdlib sources."""
    found: set[str] = set()
    files = [STDLIB / f"{m}.py" for m in ("argparse", "collections/__init__", "typing")]
    for module in MODULES:
        files.extend(sorted((STDLIB / module).rglob("*.py")))
    for path in files:
        if not path.is_file() or "test" in path.parts[-1]:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef):
                doc = ast.get_docstring(node)
                if doc:
                    found.update(
                        " ".join(p.split()) for p in doc.split("\n\n") if p.strip().isascii()
                    )
    return tuple(sorted(p for p in found if p))


def grams(text: str, n: int = 13) -> set[int]:
    """Hashed word n-grams of `text` (the fingerprint spec)."""
    return set(ngram_hashes(word_hashes(normalise_words(text)), n).tolist())


@functools.cache
def _grams_of_paragraph(text: str) -> frozenset[int]:
    """`grams(text)`, kept: every split below asks for those of the same few thousand
    paragraphs again (docs/design/test-speed.md)."""
    return frozenset(grams(text))


def split_items_and_pool(
    n_items: int, *, rng: random.Random, min_words: int = 30
) -> tuple[list[str], list[str]]:
    """`n_items` long paragraphs sharing no 13-gram with each other, and the paragraphs that
    share no 13-gram with any of them (clean text to build documents from)."""
    pool = list(paragraphs())
    rng.shuffle(pool)
    items: list[str] = []
    taken: set[int] = set()
    for text in pool:
        words = len(normalise_words(text))
        if min_words <= words <= 120 and not _grams_of_paragraph(text) & taken:
            items.append(text)
            taken |= _grams_of_paragraph(text)
            if len(items) == n_items:
                break
    clean = [p for p in pool if p not in items and not _grams_of_paragraph(p) & taken]
    return items, clean


def documents(pool: list[str], n: int, *, rng: random.Random) -> list[str]:
    """`n` documents of 1-6 random clean paragraphs each."""
    return ["\n\n".join(rng.sample(pool, rng.randint(1, 6))) for _ in range(n)]
