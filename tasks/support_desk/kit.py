"""The support_desk family kit (`evalsuite.kit.Family`), for either version's task file.

Both versions share the tools, the shop state and the grader audit's scripted policies
(`scripted.py`); each declares its own task function, version and limits.
"""

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
"""The kit of one version of support_desk: ``support_kit(task, version, limits, ...)``."""
