"""The written support policy (also in POLICY.md and, for version 3, POLICY_v3.md; a test keeps
each identical to its text here)."""

from .env import REFUND_WINDOW_DAYS

POLICY = f"""\
# Northwind Homeware support policy

1. Identify the customer from the ticket (email, phone or name) and find the order in the
   records. Never act on an order or account that belongs to another customer; when the ticket
   gives no order number, or one that does not match the records, look the order up among the
   customer's orders by the item they describe.
2. Refunds: only for items delivered no more than {REFUND_WINDOW_DAYS} days before the ticket
   was opened (count from the delivery date in the order record, not a date the customer
   quotes). Refund the amount paid for the affected line as recorded in the order, never more,
   and once per line.
3. Replacements: only for items that arrived damaged. Ship one replacement of the affected
   line; do not refund it as well.
4. Account changes (address): only after verify_identity succeeds for that customer with a
   detail the customer gave in the ticket (the postcode on file or the last 4 digits of the
   card on file). If verification fails, change nothing and decline.
5. Cancellations: only for orders that have not shipped (status "processing"). Cancelling
   refunds the payment automatically: do not refund it separately.
6. When the rules forbid a request, change nothing and reply politely that you are unable to
   do it, with the reason.
7. Always reply to the customer. Close the ticket only when the request is fixed or properly
   declined; when you need more information from the customer, ask for it and set the ticket to
   "pending".
"""

RULE_8 = """\
8. Decide from the records you checked for this ticket: the order you looked up with get_order
   (its delivery date against the refund window) and the result verify_identity gave. When you
   decline, give the reason that applies and no other (for the refund window, say when the
   order was delivered), and never tell the customer that something was done (refunded,
   replaced, cancelled, updated) unless you did it.
"""

POLICY_V3 = POLICY + RULE_8
"""Version 3's policy (support@3.0.0): version 1's seven rules and rule 8 (how a decline is
decided and worded, which verifier version 3 grades)."""
