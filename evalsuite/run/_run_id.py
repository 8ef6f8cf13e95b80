"""Run ids: the start time and a random suffix (no inspect import, for `ingest` of tables)."""

from __future__ import annotations

import secrets
from datetime import datetime

__all__ = ["new_run_id"]


def new_run_id(now: datetime) -> str:
    """``YYYYmmdd-HHMMSS-xxxxxx``: sortable by start time, unique by its random suffix."""
    return f"{now.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
