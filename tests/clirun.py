"""Running the real `scanner` command from tests: one environment, one runner."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def cli_env() -> dict[str, str]:
    """This checkout first on the path, and no index chosen by the caller's environment."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("SCANNER_INDEX", None)
    return env


def run_cli(*args: str, cwd: Path = REPO, timeout: float = 120, limits: Mapping[int, int] | None = None,
            env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`scanner ARGS...` in a subprocess; `limits`: resource limits (`resource.RLIMIT_*` -> soft and hard
    value) it starts under; `env`: variables added to `cli_env()`."""

    def apply_limits() -> None:
        for which, value in (limits or {}).items():
            resource.setrlimit(which, (value, value))

    return subprocess.run([sys.executable, "-m", "scanner", *args], cwd=cwd, env={**cli_env(), **(env or {})},
                          text=True, capture_output=True, timeout=timeout,
                          preexec_fn=apply_limits if limits else None)


def scanned_pairs(folder: Path, index: Path, *options: str) -> tuple[dict, dict[frozenset[str], dict]]:
    """`scanner scan FOLDER --json` (which must succeed), and its passage pairs by their two file names."""
    done = run_cli("scan", str(folder), "--index", str(index), "--json", "--quiet", *options)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    return found, {frozenset((Path(p["a"]).name, Path(p["b"]).name)): p for p in found["passage_pairs"]}


def the_one_match(source: Path, index: Path) -> dict:
    """`scanner check SOURCE --json` against `index`, which must find one document: that match."""
    checked = run_cli("check", str(source), "--index", str(index), "--json", "--quiet")
    [result] = json.loads(checked.stdout)["results"]
    [match] = result["matches"]
    return match
