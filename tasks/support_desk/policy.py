"""The written support policy (also in POLICY.md and, for versions 3 and 4, POLICY_v3.md and
POLICY_v4.md; a test keeps each identical to its text here)."""

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

RULES_9_TO_11 = """\
9. Identity: check each detail the customer gave in the ticket with its own verify_identity
   call (one detail per call) until one matches; one that matches is enough. Decline an
   account change only when every detail they gave has failed, and then tell them that we will
   call the phone number on their account to confirm, giving only its last four digits (e.g.
   "the number ending 4475").
10. When you have done what was asked, tell the customer what you did in the terms of the
   order record: for a refund, the amount refunded; for a cancellation, the amount that will
   be refunded; for a replacement, the item being replaced; for an address change, the new
   address. Mention no other amount or item.
11. Customers seldom quote their order number, and sometimes quote a wrong one: find the order
   among the customer's orders by the item they describe. When they bought that item in more
   than one order, the order is the one whose line shows the amount they say they paid.
"""

POLICY_V3 = POLICY + RULE_8 + RULES_9_TO_11
"""Version 3's policy (support@3.0.0): version 1's seven rules, rule 8 (how a decline is
decided and worded, which verifier version 3 grades) and rules 9 to 11 (every stated detail is
tried and a failed check names the phone on file; a reply states the record's facts of what
was done; the order is found by its item, and by the amount paid among look-alike orders)."""

RULE_12 = """\
12. A ticket may ask for several things at once (several items returned, an address change
   with returns). Decide each one on its own from the records (each item's order and delivery
   date, the identity check), do every one that is due, and answer them all in your reply:
   what you did (each amount refunded, the new address) and what you declined, with its
   reason (for each item outside the refund window, when its order was delivered). Declining
   one request is never a reason to decline the others.
"""

POLICY_V4 = POLICY_V3 + RULE_12
"""Version 4's policy (support@4.0.0): version 3's and rule 12 (a ticket asking for several
things gets each decided on its own, the due ones done, all answered in the reply)."""
