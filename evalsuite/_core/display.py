r"""Data strings made safe to print on a terminal: control characters and lookalikes shown.

A model name, an item id or a stratum comes from files evalsuite does not write (a results
CSV, an inspect log, a suite's items). Printed as they are, its control characters act on
the terminal (``\x1b[2J`` clears the screen, ``\r`` overwrites a line, a bidirectional
override reorders what follows), and a Cyrillic ``а`` looks like a Latin ``a``. Every
command prints data through `printable`, and names an id that must be told apart from
another (an unknown id, say) with `show_id` (docs/design/terminal-output.md).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["printable", "show_id"]

_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f"  # C0, DEL and C1 controls (ESC, CR, BEL, CSI, ...)
    "\u200e\u200f\u202a-\u202e\u2066-\u2069"  # bidirectional marks, embeddings, isolates
    "\u2028\u2029]"  # line and paragraph separators
)
"""Characters that act on a terminal or reorder text, rather than showing as themselves."""
_UNSAFE_KEEPING_LINES = re.compile(_UNSAFE.pattern.replace("\x00-\x1f", "\x00-\x08\x0b-\x1f"))
"""`_UNSAFE` without tab and line feed: for whole messages, whose lines are evalsuite's own."""


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, *, keep_lines: bool = False) -> str:
    r"""`text` with every control character and bidirectional override written as an escape.

    ``ESC`` becomes ``\x1b``, a right-to-left override ``\u202e``; everything else,
    non-ASCII letters included, is kept. With `keep_lines`, tab and line feed are kept (a
    message of several lines); a data string should be escaped whole.

    Examples:
        >>> printable("\x1b[2J\x1b[31mEVIL")
        '\\x1b[2J\\x1b[31mEVIL'
        >>> printable("naïve")
        'naïve'
    """
    pattern = _UNSAFE_KEEPING_LINES if keep_lines else _UNSAFE
    if pattern.search(text) is None:
        return text
    return pattern.sub(_escape, text)


def show_id(value: str) -> str:
    r"""An id quoted for a message; when it is not ASCII, with its non-ASCII code points.

    Two ids that look the same (``a-1`` and ``а-1`` with a Cyrillic ``а``) must read
    differently in an error, so a non-ASCII id names each non-ASCII character.

    Examples:
        >>> show_id("t-99")
        "'t-99'"
        >>> show_id("t-9\u0430")
        "'t-9а' (not ASCII: U+0430 CYRILLIC SMALL LETTER A at 4)"
    """
    shown = repr(value)  # repr escapes what `printable` does, and quotes
    if value.isascii():
        return shown
    points = [
        f"U+{ord(c):04X} {unicodedata.name(c, 'unnamed')} at {i}"
        for i, c in enumerate(value, start=1)
        if not c.isascii()
    ]
    more = f" and {len(points) - 5} more" if len(points) > 5 else ""
    return f"{shown} (not ASCII: {', '.join(points[:5])}{more})"
