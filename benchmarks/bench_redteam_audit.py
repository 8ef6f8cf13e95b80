"""Benchmark of the adversarial grader audit: full dev audits per family, with and without it.

For each suite version given, it runs the complete dev audit (`evalsuite.audit.audit_graders`,
every item, in a private temporary store, as `evalsuite audit X@V --graders` does) twice in the
same process: without the red team (`AuditOptions(redteam=False)`: the checks as they were before
issue 29) and with it (the generated and team policies, the shortcut detector, the reference
agents the kit declares). It prints the seconds of each, their ratio, and whether the audit
passed, with the failing red-team strata. The budget (docs/design/grader-audit.md) is 10 minutes
per family with the red team, on this 2-core machine. On a shared machine the absolute numbers
move with the load; the ratio is what to compare. Run (about 10 minutes for the default four):
``.venv/bin/python benchmarks/bench_redteam_audit.py [--refs arith@2.0.0 support@2.0.0 ...]``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evalsuite._core.layout import Layout  # noqa: E402
from evalsuite.audit import AuditOptions, GraderAudit, audit_graders  # noqa: E402
from evalsuite.manifest import KeySpec  # noqa: E402

DEFAULT = ("arith@2.0.0", "support@3.0.0", "records@2.1.0", "repair@2.0.0")
BUDGET_S = 600.0


def _audit(ref: str, redteam: bool) -> tuple[float, GraderAudit]:
    suite, _, version = ref.partition("@")
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        audit = audit_graders(
            Layout(ROOT),
            suite,
            version,
            keys=KeySpec(key_dir=Path("/nonexistent")),
            options=AuditOptions(redteam=redteam),
        )
    return time.perf_counter() - started, audit


def _red_strata(audit: GraderAudit) -> str:
    found = sorted(
        {
            stratum
            for family in audit.families
            for check in family.failed()
            if check.check in ("redteam", "shortcut", "team")
            for stratum, values in check.strata.items()
            if values.get("failed")
        }
    )
    return ", ".join(found) if found else "none"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--refs", nargs="+", default=list(DEFAULT))
    args = parser.parse_args()
    print(f"{'version':<16}{'items':>6}{'before s':>10}{'with s':>9}{'ratio':>7}  verdict")
    over = []
    for ref in args.refs:
        before, _ = _audit(ref, redteam=False)
        after, audit = _audit(ref, redteam=True)
        verdict = "passed" if audit.ok else f"FAILED (red team: {_red_strata(audit)})"
        print(
            f"{ref:<16}{audit.sample['items']:>6}{before:>10.1f}{after:>9.1f}"
            f"{after / before:>7.2f}  {verdict}"
        )
        for family in audit.families:
            report = family.redteam or {}
            best = report.get("best") or {}
            print(
                f"  {family.family}: best cheap policy {best.get('policy')} "
                f"{best.get('mean', 0.0):.3f}, margin {report.get('margin', 0.0):+.3f} under "
                f"{report.get('weakest')} ({report.get('under')})"
            )
        if after > BUDGET_S:
            over.append(ref)
    if over:
        print(f"over the {BUDGET_S:.0f} s budget: {', '.join(over)}")
        sys.exit(1)


if __name__ == "__main__":
    main()
