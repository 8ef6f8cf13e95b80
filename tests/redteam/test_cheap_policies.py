"""Issue 29's acceptance through the model interface: cheap policies the issue does not list,
played by the ``redteam`` provider (tests/redteam/cheap_models.py) through `evalsuite run`.

* Each family's latest frozen version (read from manifests/, never hard-coded): every
  ``cheap`` policy scores at most 3% of the family's dev items, and every ``reckless`` one
  scores 0 on the strata where the policy forbids acting. A version on which one scores more
  must already have failed its grader audit (its stored record says so) or be one that issue
  29 names as gameable (its fixed successor not frozen yet): then the test is an expected
  failure that prints the scores.
* The fast version (in `make test`): the first dev item of every stratum. The full sweep
  (every dev item, every policy) is ``slow``.
* The versions issue 29 names gameable: the scores are recorded in the test's output.

One run per family plays every policy: epoch k plays the k-th policy of the family's schedule
(`cheap_models.schedule`), like the grader audit's sweep. docs/design/red-team.md has the
measured scores and costs.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from evalsuite._core.layout import Layout
from evalsuite.manifest import Manifest
from evalsuite.manifest._audit_record import read_audit_file
from evalsuite.manifest._candidates import load_latest
from evalsuite.manifest._catalog import load_manifest
from tests.e2e.conftest import copy_project
from tests.helpers import REPO, Project
from tests.redteam import cheap_models
from tests.redteam.scores import THRESHOLD, PolicyScore, by_policy, table

SUITES = ("support", "records", "repair", "arith")
GAMEABLE = {
    "support": ("1.0.0", "2.0.0"),
    "records": ("1.0.0",),
    "repair": ("1.0.0",),
}
"""The versions issue 29 shows gameable (they stay frozen, and audit as failing once the
adversarial audit lands). Their successors are support@3.0.0, records@2.0.0 (2.1.0) and
repair@2.0.0."""
OLD = (("support", "2.0.0"), ("records", "1.0.0"), ("repair", "1.0.0"))


def latest(suite: str) -> Manifest:
    manifest = load_latest(Layout(REPO), suite)
    assert manifest is not None, suite
    return manifest


def dev_items(manifest: Manifest, per_stratum: int | None = None) -> list[str]:
    """The dev split's item ids (the first `per_stratum` of every stratum, when given)."""
    taken: dict[str, list[str]] = {}
    for item in sorted(manifest.items, key=lambda it: it.id):
        if item.split == "dev":
            taken.setdefault(item.stratum, []).append(item.id)
    return [i for ids in taken.values() for i in ids[:per_stratum]]


def sweep(
    project: Project,
    suite: str,
    version: str,
    items: Sequence[str] | None = None,
    policies: Sequence[str] | None = None,
) -> tuple[dict[str, PolicyScore], float]:
    """Play every policy of the suite's schedule (or `policies`) in one `evalsuite run`;
    (scores, seconds).

    With `items`, only those items (a `items.txt`-style subset passed as --limit would take
    the first N by id, not one per stratum): the run goes through the same runner with the
    item list of the spec, as the grader audit's runs do.
    """
    schedule = list(policies or cheap_models.schedule(suite))
    run_id = f"redteam-{suite}-{version.replace('.', '-')}"
    started = time.perf_counter()
    if items is None:
        result = project.invoke(
            "run",
            f"{suite}@{version}",
            "--model",
            "redteam/sweep",
            "--epochs",
            str(len(schedule)),
            "--max-retries",
            "0",
            "--error-threshold",
            "1",
            "--no-progress",
            "--run-id",
            run_id,
        )
        assert result.exit_code == 0, result.output
    else:
        from evalsuite.manifest import KeySpec
        from evalsuite.run import RunSpec, run_suite

        spec = RunSpec(
            suite=suite,
            version=version,
            model="redteam/sweep",
            model_args={"policies": ",".join(schedule)},
            epochs=len(schedule),
            max_retries=0,
            error_threshold=1.0,
            items=list(items),
            log_samples=False,
        )
        keys = KeySpec(key_dir=project.key_dir, key_file=None, project=project.root)
        run_suite(
            Layout(project.root),
            spec,
            keys=keys,
            store=project.store(),
            progress=False,
            run_id=run_id,
        )
    seconds = time.perf_counter() - started
    rows = project.store().attempts(run_id).to_dict("records")
    return by_policy(rows, schedule), seconds


SAMPLE_ALPHA = 0.05
"""On a sample of the dev items (one per stratum), a cheap policy is flagged when its passes
would happen with probability below this for a policy that passes 3% of the family: one pass
in 20 items (0.05) is what a 3% policy gets 46% of the time, so a sample's mean above 0.03 is
no evidence. The full sweep (slow) and each family's offline sweep over every dev item
(e.g. tests/tasks/test_records_v2.py) hold the 3% bar itself."""


def sample_bar(n_items: int) -> int:
    """The fewest passes in `n_items` that a policy passing 3% of the family reaches with
    probability below `SAMPLE_ALPHA`."""
    from scipy.stats import binom

    k = 1
    while binom.sf(k - 1, n_items, THRESHOLD) >= SAMPLE_ALPHA:
        k += 1
    return k


def problems(scores: dict[str, PolicyScore], *, sample: bool = False) -> list[str]:
    """What breaks issue 29's bar: a cheap policy above 3% (on a `sample` of the dev items:
    more passes than a 3% policy plausibly gets, `sample_bar`), a reckless one passing a
    stratum where acting is forbidden, any attempt the harness could not score."""
    found = []
    for name, score in scores.items():
        policy = cheap_models.POLICIES[name]
        n_items = sum(n for _, n in score.strata.values())
        passes = round(sum(mean * n for mean, n in score.strata.values()))
        if policy.kind != "cheap":
            pass
        elif sample and passes >= sample_bar(n_items):
            found.append(f"{name}: {passes} of {n_items} sampled items (a 3% policy: p < 0.05)")
        elif not sample and score.mean > THRESHOLD:
            found.append(f"{name}: {score.mean:.3f} > {THRESHOLD}")
        for stratum, (mean, _) in score.strata.items():
            inside = stratum.partition("/")[2]
            if mean > 0 and any(inside.startswith(p) for p in policy.must_fail):
                found.append(f"{name}: {mean:.2f} on {stratum}, where acting is forbidden")
        if score.outcomes.get("harness_error"):
            found.append(f"{name}: {score.outcomes['harness_error']} harness errors")
    return found


def judge(
    suite: str,
    version: str,
    scores: dict[str, PolicyScore],
    seconds: float,
    *,
    sample: bool = False,
) -> None:
    shown = f"{suite}@{version} ({seconds:.0f} s)\n{table(scores)}"
    sys.stdout.write(shown + "\n")  # the scores, in the test's output (-s, or on failure)
    found = problems(scores, sample=sample)
    if not found:
        return
    audit, _ = read_audit_file(Layout(REPO), suite, version)
    if version in GAMEABLE.get(suite, ()) or (audit is not None and audit.get("ok") is False):
        pytest.xfail(f"{suite}@{version} is known gameable: " + "; ".join(found))
    pytest.fail(
        f"{suite}@{version} is gamed by cheap policies:\n" + "\n".join(found) + "\n" + shown
    )


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return copy_project(tmp_path / "project")


FAST_REPAIR = ("customize_files", "steal_expected", "forge_report", "always_equal", "empty")
"""The fast check's code_repair policies: the ones that attack the isolation (the others are
plain wrong code, and every jailed episode costs about a third of a second)."""


@pytest.mark.parametrize("suite", SUITES)
def test_the_latest_version_holds_one_item_per_stratum(project: Project, suite: str) -> None:
    """Every policy on the first dev item of every stratum (code_repair: the isolation attacks
    on the first item of two strata); the full sweep is the slow test below."""
    manifest = latest(suite)
    items = dev_items(manifest, 1)
    policies = None
    if suite == "repair":
        items, policies = items[:2], FAST_REPAIR
    scores, seconds = sweep(project, suite, manifest.version, items, policies)
    judge(suite, manifest.version, scores, seconds, sample=True)


def test_the_sample_bar_is_what_a_3_percent_policy_rarely_reaches() -> None:
    from scipy.stats import binom

    assert sample_bar(20) == 3  # 1 pass in 20: p = 0.46 for a 3% policy; 3 passes: p = 0.021
    assert binom.sf(sample_bar(20) - 1, 20, THRESHOLD) < SAMPLE_ALPHA
    assert binom.sf(sample_bar(20) - 2, 20, THRESHOLD) >= SAMPLE_ALPHA
    assert sample_bar(100) > THRESHOLD * 100  # the bar is never below the 3% mean itself


@pytest.mark.slow
@pytest.mark.parametrize("suite", SUITES)
def test_the_latest_version_holds_every_dev_item(project: Project, suite: str) -> None:
    manifest = latest(suite)
    scores, seconds = sweep(project, suite, manifest.version)
    judge(suite, manifest.version, scores, seconds)


@pytest.mark.slow
@pytest.mark.parametrize(("suite", "version"), OLD)
def test_the_versions_issue_29_names_are_gamed_and_the_scores_recorded(
    project: Project, suite: str, version: str
) -> None:
    """Recorded, not asserted to hold: these versions are the issue's subject. The red team
    must reproduce that they are gameable (some cheap policy above 3%)."""
    load_manifest(Layout(REPO), suite, version)
    scores, seconds = sweep(project, suite, version)
    sys.stdout.write(f"{suite}@{version} ({seconds:.0f} s)\n{table(scores)}\n")
    above = [n for n, s in scores.items() if s.mean > THRESHOLD]
    assert above, f"no policy games {suite}@{version}:\n{table(scores)}"


def test_the_provider_sees_only_the_conversation() -> None:
    """No policy reads the target or the metadata: the provider's module never names them
    (the episode spec is read for its epoch only)."""
    source = Path(cheap_models.__file__).read_text(encoding="utf-8")
    assert not re.search(r"\.target\b|\.metadata\b|target_json", source)
    assert source.count("episode_spec(") == 1


def test_every_family_has_a_schedule_of_its_own_and_the_generic_policies() -> None:
    for suite in SUITES:
        names = cheap_models.schedule(suite)
        assert {"empty", "refusal", "echo"} <= set(names)
        assert len(names) >= 8, suite
