"""A frozen throwaway suite of natural-language items and clean text for guard tests."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from evalsuite._core.layout import Layout
from evalsuite.guard import _kernel
from evalsuite.manifest import KeySpec, load_holdout_items, load_manifest, resolve_key
from tests.guard import corpus
from tests.guard.corpus import split_items_and_pool
from tests.helpers import CANARY, Project, make_project, suite_toml
from tests.shared_build import build_once

N_ITEMS = 80


@dataclass(frozen=True)
class Frozen:
    """A frozen suite `demo@1.0.0`, its items' texts, and clean paragraphs."""

    project: Project
    texts: dict[str, str]
    """Item id -> input text (dev and holdout: the test wrote them)."""
    holdout: dict[str, str]
    """Holdout item id -> input text, decrypted from the vault in memory."""
    clean: list[str]

    @property
    def root(self) -> Path:
        return self.project.root


def _records(texts: list[str]) -> list[dict[str, object]]:
    return [
        {
            "id": f"doc-{k:03d}",
            "input": text,
            "target": f"answer-{k}",
            "metadata": {"op": "a" if k % 2 else "b"},
        }
        for k, text in enumerate(texts)
    ]


def freeze_suite(tmp: Path, texts: list[str], *, name: str = "demo") -> Project:
    project = make_project(tmp, name=name, records=_records(texts), toml=suite_toml(name))
    result = project.invoke("freeze", name, "--version", "1.0.0")
    assert result.exit_code == 0, result.output
    return project


def decrypt_holdout(project: Project, suite: str = "demo") -> dict[str, str]:
    layout = Layout(project.root)
    manifest = load_manifest(layout, suite, "1.0.0")
    key = resolve_key(
        suite, manifest.key, manifest.canary, KeySpec(key_dir=project.key_dir), create=False
    )
    held = load_holdout_items(layout, manifest, key)
    return {item.id: item.input for _, item in held if isinstance(item.input, str)}


@pytest.fixture(scope="session", autouse=True)
def _corpus_read_once(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The stdlib paragraphs read by one process of the session, the others load them."""
    _, built = build_once(
        tmp_path_factory,
        "guard-corpus",
        lambda _root: {"paragraphs": list(corpus.read_paragraphs())},
    )
    corpus.preload(built["paragraphs"])


@pytest.fixture(scope="session")
def frozen(tmp_path_factory: pytest.TempPathFactory) -> Frozen:
    texts, clean = split_items_and_pool(N_ITEMS, rng=random.Random(20240611))
    project = freeze_suite(tmp_path_factory.mktemp("guard"), texts)
    ids = {str(r["id"]): str(r["input"]) for r in _records(texts)}
    return Frozen(project=project, texts=ids, holdout=decrypt_holdout(project), clean=clean)


__all__ = ["CANARY", "Frozen", "decrypt_holdout", "freeze_suite"]


@pytest.fixture
def numpy_path(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Screens in a test run on the numpy path (the compiled kernel off: the reference the
    kernel is tested against) while the fixture lasts."""
    monkeypatch.setenv(_kernel.DISABLE_ENV, "1")
    _kernel.kernel.cache_clear()
    yield
    monkeypatch.delenv(_kernel.DISABLE_ENV)
    _kernel.kernel.cache_clear()
