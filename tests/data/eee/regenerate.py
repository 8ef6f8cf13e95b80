"""Regenerate the Every Eval Ever fixture with the package's own lm-eval converter.

Run from the repository root: ``python tests/data/eee/regenerate.py``. It converts the lm-eval
fixture (``tests/data/lm_eval``) with ``every_eval_ever.converters.lm_eval`` 0.3.0, as its
command line does, into ``tests/data/eee/data/arc_easy/EleutherAI/pythia-160m/<uuid>.json``
and its ``_samples.jsonl`` sidecar. The UUID and the retrieval time are fixed so that the
files do not change when nothing else does.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from unittest import mock

from every_eval_ever.converters.lm_eval.adapter import LMEvalAdapter
from every_eval_ever.converters.lm_eval.instance_level_adapter import (
    LMEvalInstanceLevelAdapter,
)

HERE = Path(__file__).parent
SOURCE = HERE.parent / "lm_eval"
DATE = "2025-03-01T12-00-00.123456"
UUID = "5f0c2a8e-3b1d-4c6e-9a7f-1e2d3c4b5a69"
RETRIEVED = "1740900000"


def main() -> None:
    out = HERE / "data" / "arc_easy" / "EleutherAI" / "pythia-160m"
    shutil.rmtree(HERE / "data", ignore_errors=True)
    out.mkdir(parents=True)
    with mock.patch(
        "every_eval_ever.converters.lm_eval.adapter.get_current_unix_timestamp",
        return_value=RETRIEVED,
    ):
        (log,) = LMEvalAdapter().transform_from_file(
            SOURCE / f"results_{DATE}.json",
            {
                "source_organization_name": "evalsuite tests",
                "evaluator_relationship": "third_party",
            },
        )
    detail = LMEvalInstanceLevelAdapter().transform_and_save(
        SOURCE / f"samples_arc_easy_{DATE}.jsonl",
        log.evaluation_id,
        log.model_info.id,
        "arc_easy",
        output_dir=out,
        file_uuid=UUID,
        collection="arc_easy",
        developer=None,
    )
    log.detailed_evaluation_results = detail
    data = log.model_dump(mode="json", exclude_none=True)
    (out / f"{UUID}.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
