"""support_desk: a state-verified customer-support environment (evalsuite task family).

Modules: `env` (the shop state and its operations, pure Python), `policy` (the written support
policy), `tools` (inspect tools over the per-episode store), `verifier` (final-state checks and
the scorer), `generate` (the seeded item generator). The inspect entry point is `task.py`, which
loads this folder as a package under a private module name (see `task.py`).
"""
