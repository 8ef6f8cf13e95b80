"""The code_repair task family (tasks/README.md, docs/design/code_repair.md)."""
