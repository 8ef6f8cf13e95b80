"""records_desk: a CRM-like records system with a read-through cache (evalsuite task family).

Modules: `env` (the records, the cache, the simulated latency; pure Python), `episode` (the
per-episode store), `tools` (inspect tools), `verifier` (reads the source of truth in the final
state), `scripted` + `kit` (the grader audit's policies and the family kit), `generate` (the
seeded item generator). The inspect entry point is `task.py`, which loads this folder as a
package under a private module name (as support_desk does).
"""
