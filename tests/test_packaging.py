"""What `pip install .` puts in site-packages: every package of the tree, its data files, no bare `plugins`."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

from clirun import REPO

CONFIG = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def _package_dirs() -> dict[str, Path]:
    """Package name -> folder, for every folder with an __init__.py (plugins/ installs as scanner_plugins)."""
    found = {}
    for root, name in ((REPO / "scanner", "scanner"), (REPO / "plugins", "scanner_plugins")):
        for init in root.rglob("__init__.py"):
            if "__pycache__" in init.parts:
                continue
            rel = init.parent.relative_to(root).parts
            found[".".join((name, *rel))] = init.parent
    return found


def test_every_package_of_the_tree_is_installed_and_none_named_plugins() -> None:
    assert sorted(CONFIG["packages"]) == sorted(_package_dirs())
    assert CONFIG["package-dir"] == {"scanner_plugins": "plugins"}
    assert not any(p == "plugins" or p.startswith("plugins.") for p in CONFIG["packages"])


def _compiled(path: Path) -> bool:
    """Whether `path` is the C source of an extension module, or that module as built (in place, by an
    editable install): the build makes them part of the package, not package-data."""
    for module in CONFIG.get("ext-modules", []):
        if path.relative_to(REPO).as_posix() in module["sources"]:
            return True
        if path.name.startswith(module["name"].rsplit(".", 1)[-1] + ".") and path.suffix in (".so", ".pyd"):
            return True
    return False


def test_every_data_file_the_code_reads_is_in_the_package_data() -> None:
    data = CONFIG["package-data"]
    for package, folder in _package_dirs().items():
        for path in folder.iterdir():
            if path.is_file() and path.suffix not in (".py", ".pyc") and not _compiled(path):
                patterns = data.get(package, [])
                assert any(fnmatch.fnmatch(path.name, p) for p in patterns), f"{path} is not in package-data"
