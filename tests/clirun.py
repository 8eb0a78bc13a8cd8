"""Running the real `scanner` command from tests: one environment, one runner."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def cli_env() -> dict[str, str]:
    """This checkout first on the path, and no index chosen by the caller's environment."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("SCANNER_INDEX", None)
    return env


def run_cli(*args: str, cwd: Path = REPO, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "scanner", *args], cwd=cwd, env=cli_env(), text=True,
                          capture_output=True, timeout=timeout)
