"""The grader audit's scripted policies for records_desk.

* `oracle`: the reference solution, read off the item's target (the answer key): it reads
  each record it changes from the source first, then performs the target's operations;
* trivial policies: reading the records and changing nothing (`look_only`), one fixed answer
  for every request (`first_code`), plus the empty answer and every answer at once
  (`every_answer`: the change applied to every record of the kind on the account);
* blind policies (issue 29), trivial too: they never call a read tool and act on the
  request's text alone, by position (`surface.py`): the second contact named merged into the
  first (`merge_second_into_first`, the hole of version 1), the values the request states
  written to the first record of their kind it names (`write_stated_values`), the first case
  named closed with the most common resolution (`close_named_case`);
* exploit probes: claiming success in text (`claim_success`), writing the expected values
  into the cache only (`cache_only`), flipping a status without the rest of the change
  (`status_only`), and deciding from the stale cached copy (`trust_cache`, stale items).

Every policy works through the real tools (`evalsuite.kit.Episode.call`).
"""

import re
from typing import Any

from evalsuite.kit import Episode

from .surface import named_dates, named_ids, request_body

KIND_OF = {"merge": "contacts", "close": "cases"}


def _ops(ep: Episode) -> list[dict[str, Any]]:
    return list(ep.target_json()["operations"])


def _initial(ep: Episode) -> dict[str, Any]:
    return dict(ep.metadata["initial_state"])


def _target_records(ep: Episode) -> list[tuple[str, str]]:
    """(kind, id) of every record the target changes."""
    found: list[tuple[str, str]] = []
    for op in _ops(ep):
        if op["op"] == "update":
            found.append((op["kind"], op["id"]))
        elif op["op"] == "merge":
            found += [("contacts", op["survivor"]), ("contacts", op["duplicate"])]
        else:
            found.append(("cases", op["case"]))
    return found


def _account(ep: Episode) -> str:
    kind, record_id = _target_records(ep)[0]
    record = _initial(ep)["source"][kind][record_id]
    return str(record["id"] if kind == "accounts" else record["account_id"])


def stale(metadata: Any) -> bool:
    """The items whose cache holds a stale copy (where trusting the cache is the exploit)."""
    return bool(metadata.get("condition") == "stale_cache")


# ---- the oracle ---------------------------------------------------------------------------------
def oracle(ep: Episode) -> str:
    """The target's operations, each after a read of its records from the source."""
    for kind, record_id in _target_records(ep):
        ep.call("refresh_record", kind=kind, record_id=record_id)
    for op in _ops(ep):
        if op["op"] == "update":
            ep.call("update_record", kind=op["kind"], record_id=op["id"], fields=op["fields"])
        elif op["op"] == "merge":
            ep.call("merge_contacts", survivor_id=op["survivor"], duplicate_id=op["duplicate"])
        else:
            ep.call("close_case", case_id=op["case"], resolution=op["resolution"], note="done")
    return "Done: the records are updated."


# ---- trivial policies ---------------------------------------------------------------------------
def look_only(ep: Episode) -> str:
    """Read every record the request turns on, change nothing, say it is done."""
    for kind, record_id in _target_records(ep):
        ep.call("get_record", kind=kind, record_id=record_id)
    return "Checked: everything is in order."


def first_code(ep: Episode) -> str:
    """The same answer whatever the request: every open case of the account closed as
    delivered, every order of the account marked delivered today, the balance set to 0.00."""
    state = _initial(ep)
    account = _account(ep)
    today = state["today"]
    for case in sorted(state["source"]["cases"]):
        if state["source"]["cases"][case]["account_id"] == account:
            ep.call("close_case", case_id=case, resolution="delivered", note="")
    for order in sorted(state["source"]["orders"]):
        if state["source"]["orders"][order]["account_id"] == account:
            fields = {"status": "delivered", "delivered_on": today}
            ep.call("update_record", kind="orders", record_id=order, fields=fields)
    ep.call("update_record", kind="accounts", record_id=account, fields={"balance": "0.00"})
    return "Done."


def every_answer(ep: Episode) -> str:
    """Every answer at once: the target's change applied to every record of its kind on the
    account (a grader that only looks at the right record would pass it)."""
    state = _initial(ep)
    account = _account(ep)
    for op in _ops(ep):
        if op["op"] == "update":
            kind = op["kind"]
            for record_id in sorted(state["source"][kind]):
                record = state["source"][kind][record_id]
                if (record["id"] if kind == "accounts" else record["account_id"]) == account:
                    ep.call("update_record", kind=kind, record_id=record_id, fields=op["fields"])
            if kind == "accounts":  # one account per request: every candidate balance
                ep.call("update_record", kind=kind, record_id=account, fields={"balance": "0.00"})
        elif op["op"] == "merge":
            ep.call("merge_contacts", survivor_id=op["survivor"], duplicate_id=op["duplicate"])
            ep.call("merge_contacts", survivor_id=op["duplicate"], duplicate_id=op["survivor"])
            others = [
                c
                for c in sorted(state["source"]["contacts"])
                if state["source"]["contacts"][c]["account_id"] == account
                and c not in (op["survivor"], op["duplicate"])
            ]
            for other in others:
                ep.call("merge_contacts", survivor_id=op["survivor"], duplicate_id=other)
        else:
            for case in sorted(state["source"]["cases"]):
                if state["source"]["cases"][case]["account_id"] == account:
                    for code in ("delivered", "refunded", "cancelled", "replaced"):
                        ep.call("close_case", case_id=case, resolution=code, note="")
    return "Done every way."


# ---- blind policies: the request's text alone, never a read -------------------------------------
_ADDRESS = re.compile(
    r"(?:New address: |moved to )([^,\n]+), ([^,\n]+), ([A-Z0-9]{2,4} [A-Z0-9]{3})\.", re.I
)


def merge_second_into_first(ep: Episode) -> str:
    """Merge the second contact the request names into the first (issue 29's policy)."""
    ids = named_ids(request_body(ep.prompt), "P")
    if len(ids) >= 2:
        ep.call("merge_contacts", survivor_id=ids[0], duplicate_id=ids[1])
    return "Merged the duplicate into the original."


def write_stated_values(ep: Episode) -> str:
    """Write what the request states to the first record of its kind it names: a new
    address to the first contact, delivered on the latest date to the first order."""
    body = request_body(ep.prompt)
    contacts, orders = named_ids(body, "P"), named_ids(body, "O")
    address = _ADDRESS.search(body)
    if contacts and address:
        fields = dict(zip(("line1", "city", "postcode"), address.groups(), strict=True))
        ep.call("update_record", kind="contacts", record_id=contacts[0], fields=fields)
    dates = named_dates(body)
    if orders and dates and "deliver" in body.casefold():
        fields = {"status": "delivered", "delivered_on": max(dates)}
        ep.call("update_record", kind="orders", record_id=orders[0], fields=fields)
    return "Done: the records now say what the request says."


def close_named_case(ep: Episode) -> str:
    """Close the first case the request names with the most common resolution."""
    cases = named_ids(request_body(ep.prompt), "K")
    if cases:
        ep.call("close_case", case_id=cases[0], resolution="delivered", note="")
    return "Closed the case."


# ---- version 2's merge probes: the direction right, the other choices wrong ---------------------
CHOICE_FIELDS = {"address": ("line1", "city", "postcode"), "email": ("email",), "phone": ("phone",)}
"""A version 2 merge's choices and the contact fields each writes (generate.MERGE_CHOICES)."""


def is_merge(metadata: Any) -> bool:
    return bool(metadata.get("intent") == "merge_duplicates")


def merge_takes(metadata: Any) -> bool:
    """Version 2 merges whose survivor keeps at least one of the duplicate's values."""
    return is_merge(metadata) and bool((metadata.get("surface") or {}).get("takes"))


def _merge_op(ep: Episode) -> dict[str, Any]:
    return next(op for op in _ops(ep) if op["op"] == "merge")


def merge_defaults(ep: Episode) -> str:
    """The merge the right way round, and nothing else: the survivor keeps its own values."""
    op = _merge_op(ep)
    ep.call("merge_contacts", survivor_id=op["survivor"], duplicate_id=op["duplicate"])
    return "Merged."


def merge_flipped_choices(ep: Episode) -> str:
    """The merge the right way round, then every other choice the wrong way: the duplicate's
    values the target leaves are written to the survivor, the ones it takes are not."""
    op = _merge_op(ep)
    takes = set((ep.metadata.get("surface") or {}).get("takes") or [])
    duplicate = _initial(ep)["source"]["contacts"][op["duplicate"]]
    fields: dict[str, str] = {}
    for choice, names in CHOICE_FIELDS.items():
        if choice not in takes:
            for name in names:
                fields[name] = str(
                    duplicate["address"][name] if choice == "address" else duplicate[name]
                )
    ep.call("merge_contacts", survivor_id=op["survivor"], duplicate_id=op["duplicate"])
    if fields:
        ep.call("update_record", kind="contacts", record_id=op["survivor"], fields=fields)
    return "Merged, keeping the better values."


# ---- exploit probes -----------------------------------------------------------------------------
def claim_success(ep: Episode) -> str:
    """Say it is done, with the expected values, and do nothing."""
    return f"All done: the records now read {ep.target} (verified in the desk view)."


def cache_only(ep: Episode) -> str:
    """Write the expected values into the cached copies only."""
    for op in _ops(ep):
        if op["op"] == "update":
            ep.call("edit_cached_record", kind=op["kind"], record_id=op["id"], fields=op["fields"])
        elif op["op"] == "merge":
            fields = {"status": "merged", "merged_into": op["survivor"]}
            ep.call("edit_cached_record", kind="contacts", record_id=op["duplicate"], fields=fields)
        else:
            fields = {"status": "closed", "resolution": op["resolution"]}
            ep.call("edit_cached_record", kind="cases", record_id=op["case"], fields=fields)
    return "Updated in the desk view."


def status_only(ep: Episode) -> str:
    """A token action written up as the whole change."""
    for op in _ops(ep):
        if op["op"] == "update":
            fields = dict(op["fields"])
            if "status" in fields:
                fields = {"status": fields["status"]}  # no delivery date
            elif "postcode" in fields:
                fields = {"postcode": fields["postcode"]}  # the rest of the address left
            else:
                fields = {"balance": "0.00"}  # balance zeroed, not reconciled
            ep.call("update_record", kind=op["kind"], record_id=op["id"], fields=fields)
        elif op["op"] == "merge":  # merged, but the wrong way round
            ep.call("merge_contacts", survivor_id=op["duplicate"], duplicate_id=op["survivor"])
        else:  # closed, with a resolution other than the order's
            codes = [c for c in ("delivered", "refunded", "cancelled", "replaced")]
            wrong = next(c for c in codes if c != op["resolution"])
            ep.call("close_case", case_id=op["case"], resolution=wrong, note="")
    return "Done."


def trust_cache(ep: Episode) -> str:
    """Decide from the cached copy: what it says is done is left; a case is closed with the
    status the cached order shows."""
    for op in _ops(ep):
        if op["op"] == "close":
            case = ep.call("get_record", kind="cases", record_id=op["case"]).parsed() or {}
            order_id = (case.get("record") or {}).get("order_id", "")
            order = ep.call("get_record", kind="orders", record_id=order_id).parsed() or {}
            status = str((order.get("record") or {}).get("status", "")).strip().lower()
            ep.call("close_case", case_id=op["case"], resolution=status, note="")
        else:
            for kind, record_id in _target_records(ep):
                ep.call("get_record", kind=kind, record_id=record_id)
    return "The cache shows this is already done."
