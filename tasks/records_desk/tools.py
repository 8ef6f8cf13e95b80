"""The records desk's tools. Every body runs through `guarded_call` (timeouts, injected faults).

Which timeout is whose fault (declared again in the family kit, checked by the grader audit):

* `search_records` is ``on_timeout="limit"``: its simulated cost grows with the rows it scans,
  and a search without an indexed filter on a large table runs past the tool's time limit
  (`env.SEARCH_LIMIT_S`). That is the model's doing (a query too broad for a slow tool): it
  sees the timeout, and the attempt is a labelled ``tool_time`` limit, never a default value.
* every other tool is ``on_timeout="harness_error"``: their cost is small and fixed, so a
  timeout can only be the tool's own fault (a hang), which is counted and excluded.

Conditions the agent should cope with (unknown id, bad format, rate limit) are `ToolError`s;
a broken environment (no records, hash mismatch) is a `HarnessFault`.
"""

import json
from typing import Any, Literal

from inspect_ai.tool import Tool, ToolError, tool

from evalsuite.run import ToolTimeLimit, guarded_call

from .env import RecordsError, TooSlow, dispatch
from .episode import with_records

TIMEOUT_OUTCOME: dict[str, Literal["harness_error", "limit"]] = {
    "search_records": "limit",
    "get_record": "harness_error",
    "refresh_record": "harness_error",
    "update_record": "harness_error",
    "merge_contacts": "harness_error",
    "close_case": "harness_error",
    "edit_cached_record": "harness_error",
}
"""What a timeout of each tool is (the kit declares the same; the audit compares)."""


async def _run(tool_name: str, /, **arguments: Any) -> str:
    """Run tool `tool_name` on this episode's records under `guarded_call`; JSON for the agent."""

    async def call() -> str:
        try:
            result = with_records(lambda records: dispatch(records, tool_name, arguments))
        except RecordsError as exc:
            raise ToolError(str(exc)) from None
        except TooSlow as exc:
            raise ToolTimeLimit(exc.seconds, exc.limit_s) from None
        return json.dumps(result, sort_keys=True, ensure_ascii=False)

    return await guarded_call(tool_name, call, on_timeout=TIMEOUT_OUTCOME[tool_name])


@tool
def search_records() -> Tool:
    async def execute(
        kind: str,
        account_id: str = "",
        email: str = "",
        name: str = "",
        status: str = "",
        page: int = 1,
    ) -> str:
        """Search the system of record; every filter given must match. Paginated.

        Filters on account_id (and email, for contacts) use an index and are fast; any
        other search scans the whole table, which is slow on large tables.

        Args:
            kind: "accounts", "contacts", "orders", "cases" or "ledger".
            account_id: Account id, e.g. "A-1234" (indexed).
            email: Email address, contacts only (indexed; case does not matter).
            name: Name or part of it (for ledger entries: the account's name).
            status: Record status, e.g. "open" for cases.
            page: Page number, from 1.

        Returns:
            JSON {"results": [record summaries], "page", "pages", "total"}.
        """
        return await _run(
            "search_records",
            kind=kind,
            account_id=account_id,
            email=email,
            name=name,
            status=status,
            page=page,
        )

    return execute


@tool
def get_record() -> Tool:
    async def execute(kind: str, record_id: str) -> str:
        """Read one record through the desk's cache (fast; the copy may be old).

        Args:
            kind: "accounts", "contacts", "orders", "cases" or "ledger".
            record_id: The record's id.

        Returns:
            JSON {"record", "served_from": "cache"|"source", "cached_at"}.
        """
        return await _run("get_record", kind=kind, record_id=record_id)

    return execute


@tool
def refresh_record() -> Tool:
    async def execute(kind: str, record_id: str) -> str:
        """Read one record from the system of record and refresh the desk's cached copy.

        Args:
            kind: "accounts", "contacts", "orders", "cases" or "ledger".
            record_id: The record's id.

        Returns:
            JSON {"record", "served_from": "source", "cached_at"}.
        """
        return await _run("refresh_record", kind=kind, record_id=record_id)

    return execute


@tool
def update_record() -> Tool:
    async def execute(kind: str, record_id: str, fields: dict[str, str]) -> str:
        """Write fields of one record in the system of record.

        Args:
            kind: "contacts" (name, email, phone, line1, city, postcode), "orders" (status,
                delivered_on) or "accounts" (balance).
            record_id: The record's id.
            fields: Field name -> new value, e.g. {"postcode": "LS1 4AP"}.

        Returns:
            JSON {"updated": id, "fields": [names]}.
        """
        return await _run("update_record", kind=kind, record_id=record_id, fields=fields)

    return execute


@tool
def merge_contacts() -> Tool:
    async def execute(survivor_id: str, duplicate_id: str) -> str:
        """Merge a duplicate contact into the surviving one (orders and cases move over).

        Args:
            survivor_id: The contact that stays.
            duplicate_id: The contact merged into it (marked merged).

        Returns:
            JSON {"survivor", "merged", "moved": [order and case ids]}.
        """
        return await _run("merge_contacts", survivor_id=survivor_id, duplicate_id=duplicate_id)

    return execute


@tool
def close_case() -> Tool:
    async def execute(case_id: str, resolution: str, note: str = "") -> str:
        """Close an open case with a resolution code.

        Args:
            case_id: Case id, e.g. "K-5001".
            resolution: "delivered", "refunded", "cancelled" or "replaced".
            note: Optional short note.

        Returns:
            JSON {"closed", "resolution"}.
        """
        return await _run("close_case", case_id=case_id, resolution=resolution, note=note)

    return execute


@tool
def edit_cached_record() -> Tool:
    async def execute(kind: str, record_id: str, fields: dict[str, str]) -> str:
        """Edit the desk's cached copy of a record (display only: the system of record is
        not changed; use update_record for that).

        Args:
            kind: "accounts", "contacts", "orders", "cases" or "ledger".
            record_id: The record's id.
            fields: Field name -> value shown in the cached copy.

        Returns:
            JSON {"cached": key}.
        """
        return await _run("edit_cached_record", kind=kind, record_id=record_id, fields=fields)

    return execute


def records_tools() -> list[Tool]:
    """Every tool of the records desk, in a stable order."""
    return [
        search_records(),
        get_record(),
        refresh_record(),
        update_record(),
        merge_contacts(),
        close_case(),
        edit_cached_record(),
    ]
