"""Whether this process may fork a helper process safely (Linux, no busy thread).

A forked child inherits a copy of every lock; a lock held by another thread at the fork is
held forever in the child. So a helper is forked only from the main thread, with no other
thread alive but those the caller names as idle (e.g. anyio's workers waiting on their
queue). Used by the inspect-log reader's second process and the store's parallel read of
runs' columns (docs/scale.md).
"""

from __future__ import annotations

__all__ = ["forkable"]


def forkable(idle_threads: tuple[str, ...] = ()) -> bool:
    """Linux, fork available, called from the main thread, any other thread named idle."""
    import multiprocessing
    import sys
    import threading

    main = threading.main_thread()
    others = [t for t in threading.enumerate() if t is not main]
    return (
        sys.platform == "linux"
        and "fork" in multiprocessing.get_all_start_methods()
        and threading.current_thread() is main
        and all(t.name.startswith(idle_threads) for t in others)
    )
