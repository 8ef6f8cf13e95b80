"""The repository stands on its own: nothing cites reference files that live outside it."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTSIDE = re.compile(r"METHODS\.md|DESIGN\.md|INSPECT_NOTES|STYLE\.md|\.\./shared\b|shared/data")
SCANNED = ("evalsuite", "tasks", "docs", "tests", "benchmarks", "scripts")


def _files() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "pyproject.toml", ROOT / "Makefile"]
    for top in SCANNED:
        for path in (ROOT / top).rglob("*"):
            if path.suffix in {".py", ".md", ".toml", ".txt"} and path.is_file():
                files.append(path)
    return [f for f in files if f.exists() and f != Path(__file__).resolve()]


def test_no_file_cites_a_reference_outside_the_repository() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in _files()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert offenders == []
