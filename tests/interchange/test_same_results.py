"""Acceptance of issue 34: one model's results on one benchmark, arriving as an inspect log,
an lm-eval samples file and an Every Eval Ever record, attach to the same suite items and
give the same mean."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from inspect_ai.log import read_eval_log

from tests.helpers import Project, json_out
from tests.interchange.conftest import ingest
from tests.run.test_foreign_tasks import frozen
from tests.run.test_ingest_suite import plain_inspect_log

DATE = "2026-01-02T03-04-05.678901"
UUID = "3c1f0e2a-9b8d-4e7f-a6c5-d4e3f2a1b0c9"
MODEL = "fakeecho/x"


def _results(log: Path) -> list[tuple[str, str, str, float]]:
    """(id, input, target, score) of every sample of the log, as its scorer scored it."""
    read = read_eval_log(str(log))
    assert read.samples is not None
    out = []
    for s in read.samples:
        assert s.scores is not None
        value = next(iter(s.scores.values())).value
        out.append((str(s.id), str(s.input), str(s.target), 1.0 if value == "C" else 0.0))
    return out


def _lm_eval(folder: Path, rows: list[tuple[str, str, str, float]]) -> Path:
    """The samples file and results file lm_eval --log_samples writes for these results."""
    folder.mkdir()
    lines = []
    for doc_id, (item, text, target, score) in enumerate(rows):
        doc = {"id": item, "input": text, "target": target}
        lines.append(
            {
                "doc_id": doc_id,
                "doc": doc,
                "target": target,
                "arguments": {"gen_args_0": {"arg_0": text, "arg_1": {"until": ["\n"]}}},
                "resps": [["yes"]],
                "filtered_resps": ["yes"],
                "filter": "none",
                "metrics": ["exact_match"],
                "doc_hash": hashlib.sha256(json.dumps(doc).encode()).hexdigest(),
                "prompt_hash": hashlib.sha256(text.encode()).hexdigest(),
                "target_hash": hashlib.sha256(target.encode()).hexdigest(),
                "exact_match": score,
            }
        )
    samples = folder / f"samples_triage_{DATE}.jsonl"
    samples.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    mean = sum(r[3] for r in rows) / len(rows)
    results = {
        "results": {"triage": {"alias": "triage", "exact_match,none": mean}},
        "higher_is_better": {"triage": {"exact_match": True}},
        "n-samples": {"triage": {"original": len(rows), "effective": len(rows)}},
        "config": {"model": "local-chat-completions", "model_args": f"model={MODEL}"},
        "model_name": MODEL,
        "lm_eval_version": "0.4.8",
        "date": 1767323045.0,
    }
    (folder / f"results_{DATE}.json").write_text(json.dumps(results), encoding="utf-8")
    return samples


def _eee(folder: Path, rows: list[tuple[str, str, str, float]]) -> Path:
    """An Every Eval Ever record of these results, built and checked with the package's types
    (sample ids are the dataset's, as the package's inspect converter writes them)."""
    from every_eval_ever.eval_types import EvaluationLog
    from every_eval_ever.instance_level_types import InstanceLevelEvaluationLog

    where = folder / "data" / "triage" / "fakeecho" / "x"
    where.mkdir(parents=True)
    evaluation_id = f"triage/{MODEL}/1767323045"
    lines = []
    for item, text, target, score in rows:
        sample: dict[str, Any] = {
            "schema_version": "0.3.0",
            "evaluation_id": evaluation_id,
            "model_id": MODEL,
            "evaluation_name": "triage",
            "evaluation_result_id": "accuracy",
            "sample_id": item,
            "sample_hash": hashlib.sha256((text + target).encode()).hexdigest(),
            "interaction_type": "single_turn",
            "input": {"raw": text, "reference": [target]},
            "output": {"raw": ["yes"]},
            "answer_attribution": [],
            "evaluation": {"score": score, "is_correct": score == 1.0},
        }
        InstanceLevelEvaluationLog.model_validate(sample)
        lines.append(json.dumps(sample))
    content = ("\n".join(lines) + "\n").encode()
    sidecar = f"data/triage/fakeecho/x/{UUID}_samples.jsonl"
    (folder / sidecar).write_bytes(content)
    record = {
        "schema_version": "0.3.0",
        "evaluation_id": evaluation_id,
        "retrieved_timestamp": "1767323100",
        "source_metadata": {
            "source_type": "evaluation_run",
            "source_organization_name": "another team",
            "evaluator_relationship": "third_party",
        },
        "eval_library": {"name": "inspect_ai", "version": "0.3.285"},
        "model_info": {"name": MODEL, "id": MODEL, "developer": "fakeecho"},
        "evaluation_results": [
            {
                "evaluation_result_id": "accuracy",
                "evaluation_name": "triage",
                "source_data": {"dataset_name": "triage", "source_type": "other"},
                "metric_config": {
                    "metric_name": "accuracy",
                    "lower_is_better": False,
                    "score_type": "binary",
                },
                "score_details": {"score": sum(r[3] for r in rows) / len(rows)},
            }
        ],
        "detailed_evaluation_results": {
            "format": "jsonl",
            "file_path": sidecar,
            "hash_algorithm": "sha256",
            "checksum": hashlib.sha256(content).hexdigest(),
            "total_rows": len(lines),
        },
    }
    EvaluationLog.model_validate(record)
    path = where / f"{UUID}.json"
    path.write_text(json.dumps(record, indent=2), encoding="utf-8")
    return path


def test_inspect_lm_eval_and_eee_results_attach_to_the_same_items_with_one_mean(
    tmp_path: Path,
) -> None:
    project: Project = frozen(tmp_path)
    log = plain_inspect_log(tmp_path, epochs=1)
    rows = _results(log)
    attach = ("--suite", "desk@1.0.0", "--split", "dev")
    runs = [
        ingest(project, log, "inspect", *attach),
        ingest(project, _lm_eval(tmp_path / "lm", rows), "lm-eval", *attach),
        ingest(project, _eee(tmp_path / "eee", rows), "eee", *attach),
    ]
    assert [r["split"] for r in runs] == ["dev"] * 3
    assert len({(r["n_items"], r["planned"], r["left_out"]) for r in runs}) == 1
    scores = [json_out(project.invoke("score", r["run_id"], "--json")) for r in runs]
    means = {s["overall"]["mean"] for s in scores}
    assert len(means) == 1, means
    from evalsuite.store import Store, default_store_url

    store = Store(default_store_url(project.root / ".evalsuite"))
    frames = [store.attempts(r["run_id"]) for r in runs]
    for frame in frames[1:]:
        for column in ("item_id", "item_hash", "stratum", "score"):
            assert list(frame[column]) == list(frames[0][column]), column
    # and they pair item by item: a difference of 0
    compared = json_out(project.invoke("compare", runs[0]["run_id"], runs[1]["run_id"], "--json"))
    assert compared["diff"] == 0.0
