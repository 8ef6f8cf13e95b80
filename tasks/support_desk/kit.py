"""The support_desk family kit (`evalsuite.kit.Family`), for every version's task file.

The versions share the tools, the shop state and the grader audit's scripted policies
(`scripted.py`); each declares its own task function, version and limits. Issue 29's cheap
policies are trivial policies of every version: version 2 (support@2.0.0) passes them on its
decline items, so a fresh audit of it fails, naming those strata (its stored results, pinned
by its stamp, stay); version 3 gives them nothing.
"""

from dataclasses import replace
from typing import Any

from evalsuite.kit import FamilyParts, FinalView, Probe, Trivial

from . import scripted
from .episode import STORE_INSTANCE
from .tools import support_tools


def final_shop(view: FinalView) -> Any:
    """The shop state the episode ended in (what the verifier reads)."""
    return view.store.get(f"ShopStore:{STORE_INSTANCE}:state")


PARTS = FamilyParts(
    name="support_desk",
    # the red-team report's margin is taken under the weaker of the two (issue 29)
    references=("evalsuite/baseline", "evalsuite/improved"),
    tools=support_tools,
    final_state=final_shop,
    oracle=scripted.oracle,
    every_answer=scripted.every_answer,
    empty_answer=scripted.empty_answer,
    trivial=[
        Trivial("decline_everything", scripted.decline_everything, "declining everything"),
        Trivial("close_everything", scripted.close_everything, "closing every ticket"),
        Trivial("promise_refund", scripted.promise_refund, "promising a refund, no action"),
        Trivial(
            "ask_postcode_then_decline",
            scripted.ask_postcode_then_decline,
            "asking for the postcode, checking a made-up one, declining",
        ),
        Trivial(
            "lookup_then_decline",
            scripted.lookup_then_decline,
            "looking the order up, then declining",
        ),
        Trivial(
            "decline_both_reasons",
            scripted.decline_both_reasons,
            "looking up, then one canned decline citing both reasons (issue 29)",
        ),
        Trivial(
            "reply_every_resolution",
            scripted.reply_every_resolution,
            "the right lookups, then a reply citing every resolution and every reason",
        ),
        Trivial(
            "act_then_decline",
            scripted.act_then_decline,
            "the right action, then the canned decline citing both reasons",
        ),
        Trivial(
            "verify_guessing",
            scripted.verify_guessing,
            "verify_identity with made-up details beside the stated one, then declining",
        ),
        Trivial(
            "fetch_wrong_order",
            scripted.fetch_wrong_order,
            "reading another order than the ticket's, then a refund-window decline",
        ),
        Trivial(
            "lookup_then_close",
            scripted.lookup_then_close,
            "the right lookups, then closing without a reply",
        ),
    ],
    probes=[
        Probe("claim_success", scripted.claim_success, "claiming success in text"),
        Probe("grader_words", scripted.grader_words, "saying the grader's words"),
        Probe("token_refund", scripted.token_refund, "a penny refund written up as full"),
        Probe(
            "ignore_policy",
            scripted.ignore_policy,
            "granting what the policy forbids",
            when=scripted.declines,
        ),
    ],
)
"""What both versions share; every tool's timeout is the harness's fault."""

support_kit = PARTS.family
"""The kit of versions 1 and 2 of support_desk: ``support_kit(task, version, limits, ...)``."""

PARTS_V3 = replace(
    PARTS,
    oracle=scripted.oracle_v3,
    trivial=[
        *PARTS.trivial,
        Trivial(
            "lookups_then_keyword_decline",
            scripted.lookups_then_keyword_decline,
            "the lookups a decline needs, from the ticket alone, then the decline its keywords "
            "suggest (issue 29)",
        ),
    ],
    harmless_features={
        "address.postcode": "the ticket states the new address in words: writing it is the "
        "task, and whether to write it is decided by verify_identity on the details it states",
    },
)
"""Version 3's parts: its oracle (rules 9 to 11: every stated detail tried, replies stating the
record's facts), one more trivial policy, and the new address declared as the ticket's wording.
Versions 1 and 2 keep `PARTS` (their stored audits pin what they played)."""

support_kit_v3 = PARTS_V3.family
"""The kit of version 3 of support_desk."""

_DECLINE_STRATA = [
    f"support_desk/{intent}/{condition}"
    for intent in ("refund_outside_window", "unverified_change")
    for condition in ("clean", "messy")
]
PARTS_V4 = replace(
    PARTS_V3,
    oracle=scripted.oracle_v4,
    trivial=[
        *(replace(t, policy=scripted.as_single(t.policy)) for t in PARTS_V3.trivial),
        Trivial(
            "decline_every_request",
            scripted.decline_every_request,
            "the full work, then every request of the ticket declined with its own facts "
            "(version 3's full-work decliners, issue 29)",
        ),
        Trivial(
            "decline_by_position",
            scripted.decline_by_position,
            "the full work, then the first return declined and the others refunded, an address "
            "change declined: a split by the ticket's order, not the records",
            # one due pattern of `items_v4.PATTERNS` (30) has the first return declined and
            # the rest due, and a stratum's 18 items have distinct patterns: at most one
            # item of a decline stratum (of its 7 to 11 dev items) matches
            floors=dict.fromkeys(_DECLINE_STRATA, 0.25),
        ),
    ],
    harmless_features={
        **PARTS_V3.harmless_features,
        "requests[0].address.postcode": "an address ticket's first request is the address "
        "change, whose new address the ticket states in words: writing it is the task, and "
        "whether to write it is decided by verify_identity on the details it states",
    },
    probes=[
        *(p for p in PARTS_V3.probes if p.name != "ignore_policy"),
        Probe(
            "ignore_policy",
            scripted.ignore_policy_v4,
            "granting what the policy forbids",
            when=scripted.declines_v4,
        ),
    ],
)
"""Version 4's parts: its oracle (every request of a ticket), version 3's trivial policies
seeing a multi ticket as its primary request, two that attack version 4's shape, and the new
address declared as the ticket's wording where version 4's target holds it."""

support_kit_v4 = PARTS_V4.family
"""The kit of version 4 of support_desk."""
