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


def test_no_private_name_is_imported_across_modules() -> None:
    """A leading underscore means "this module's own": another module that needs it gets a public name."""
    import ast

    offenders = []
    for path in [*(REPO / "scanner").rglob("*.py"), *(REPO / "plugins").rglob("*.py")]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(("scanner", "plugins")):
                offenders += [f"{path.relative_to(REPO)}: {node.module}.{a.name}" for a in node.names
                              if a.name.startswith("_") and not a.name.startswith("__")]
    assert offenders == []
