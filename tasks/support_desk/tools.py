"""The support desk's tools. Every body runs through `guarded_call` (timeouts, injected faults).

Conditions the agent should cope with (unknown order, bad line, order already shipped...) are
`ToolError`s; a broken environment (no shop, hash mismatch) is a `HarnessFault`.
"""

import json
from typing import Any

from inspect_ai.tool import Tool, ToolError, tool

from evalsuite.run import guarded_call

from .env import READ_ONLY, ShopError, dispatch
from .episode import with_shop


async def _run(tool_name: str, /, **arguments: Any) -> str:
    """Run tool `tool_name` on this episode's shop under `guarded_call`; JSON for the agent."""

    async def call() -> str:
        try:
            result = with_shop(
                lambda shop: dispatch(shop, tool_name, arguments),
                mutate=tool_name not in READ_ONLY,
            )
        except ShopError as exc:
            raise ToolError(str(exc)) from None
        return json.dumps(result, sort_keys=True)

    return await guarded_call(tool_name, call)


@tool
def find_customer() -> Tool:
    async def execute(email: str = "", name: str = "", phone: str = "") -> str:
        """Find customer accounts; every criterion given must match.

        Args:
            email: Email address (case does not matter).
            name: Full name or part of it.
            phone: Phone number in any format.

        Returns:
            JSON list of matching customers (id, name, email, phone, city); empty if none.
        """
        return await _run("find_customer", email=email, name=name, phone=phone)

    return execute


@tool
def get_order() -> Tool:
    async def execute(order_id: str) -> str:
        """Look up one order with its lines, amounts paid, status and dates.

        Args:
            order_id: Order id, e.g. "O-12345".

        Returns:
            JSON order record (amounts in GBP).
        """
        return await _run("get_order", order_id=order_id)

    return execute


@tool
def list_orders() -> Tool:
    async def execute(customer_id: str) -> str:
        """List a customer's orders, newest first.

        Args:
            customer_id: Customer id, e.g. "C-1234".

        Returns:
            JSON list of order summaries (id, dates, status, item names, total).
        """
        return await _run("list_orders", customer_id=customer_id)

    return execute


@tool
def verify_identity() -> Tool:
    async def execute(customer_id: str, postcode: str = "", card_last4: str = "") -> str:
        """Check a detail the customer gave against their account.

        Args:
            customer_id: Customer id.
            postcode: The postcode the customer stated.
            card_last4: The last 4 card digits the customer stated.

        Returns:
            JSON {"verified": true|false}.
        """
        return await _run(
            "verify_identity", customer_id=customer_id, postcode=postcode, card_last4=card_last4
        )

    return execute


@tool
def refund() -> Tool:
    async def execute(order_id: str, line_id: str, amount: float, reason: str) -> str:
        """Refund money for one order line to the original payment method.

        Args:
            order_id: Order id.
            line_id: Line id within the order, e.g. "L2".
            amount: Amount in GBP, e.g. 35.99.
            reason: Short reason.

        Returns:
            JSON refund record.
        """
        return await _run(
            "refund", order_id=order_id, line_id=line_id, amount=amount, reason=reason
        )

    return execute


@tool
def ship_replacement() -> Tool:
    async def execute(order_id: str, line_id: str, reason: str) -> str:
        """Ship a free replacement of one order line.

        Args:
            order_id: Order id.
            line_id: Line id within the order.
            reason: Short reason.

        Returns:
            JSON shipment record.
        """
        return await _run("ship_replacement", order_id=order_id, line_id=line_id, reason=reason)

    return execute


@tool
def update_address() -> Tool:
    async def execute(customer_id: str, line1: str, city: str, postcode: str) -> str:
        """Replace the address on a customer's account.

        Args:
            customer_id: Customer id.
            line1: Street address (house number and street, flat if any).
            city: Town or city.
            postcode: Postcode.

        Returns:
            JSON {"updated": true}.
        """
        return await _run(
            "update_address", customer_id=customer_id, line1=line1, city=city, postcode=postcode
        )

    return execute


@tool
def cancel_order() -> Tool:
    async def execute(order_id: str, reason: str) -> str:
        """Cancel an order that has not shipped; its payment is refunded automatically.

        Args:
            order_id: Order id.
            reason: Short reason.

        Returns:
            JSON record of the automatic refund.
        """
        return await _run("cancel_order", order_id=order_id, reason=reason)

    return execute


@tool
def reply_to_customer() -> Tool:
    async def execute(ticket_id: str, message: str) -> str:
        """Send a message to the customer on the ticket.

        Args:
            ticket_id: Ticket id, e.g. "T-1234".
            message: The message text.

        Returns:
            JSON {"sent": true}.
        """
        return await _run("reply_to_customer", ticket_id=ticket_id, message=message)

    return execute


@tool
def set_ticket_status() -> Tool:
    async def execute(ticket_id: str, status: str) -> str:
        """Set the ticket's status.

        Args:
            ticket_id: Ticket id.
            status: "open", "pending" (waiting on the customer) or "closed".

        Returns:
            JSON {"status": ...}.
        """
        return await _run("set_ticket_status", ticket_id=ticket_id, status=status)

    return execute


def support_tools() -> list[Tool]:
    """Every tool of the support desk, in a stable order."""
    return [
        find_customer(),
        get_order(),
        list_orders(),
        verify_identity(),
        refund(),
        ship_replacement(),
        update_address(),
        cancel_order(),
        reply_to_customer(),
        set_ticket_status(),
    ]
