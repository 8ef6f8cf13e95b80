"""Shared test options: opt-in markers, offline inspect settings."""

from __future__ import annotations

import os

import pytest

# never let a test reach a model API or a hub, and keep inspect's traces quiet
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("INSPECT_TRACE_LEVEL", "CRITICAL")
os.environ.setdefault("INSPECT_EVAL_CTL_SERVER", "false")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", help="run tests marked slow")
    parser.addoption("--runbrowser", action="store_true", help="run tests needing Chromium")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("--runslow"):
        skip = pytest.mark.skip(reason="slow: run with --runslow (make slow)")
        for item in items:
            if "slow" in item.keywords:
                item.add_marker(skip)
