"""The layering in docs/ARCHITECTURE.md, checked by import-linter on the real import graph."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from clirun import REPO


def test_import_contracts_hold() -> None:
    lint = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    if not Path(lint).exists():
        pytest.skip("import-linter is not installed (pip install -e '.[dev]')")
    done = subprocess.run([lint, "--config", str(REPO / "pyproject.toml")], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:]
    contracts = (REPO / "pyproject.toml").read_text().count("[[tool.importlinter.contracts]]")
    assert f"{contracts} kept, 0 broken" in done.stdout
