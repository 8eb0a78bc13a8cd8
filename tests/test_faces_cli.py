"""The command table of `scanner` names only commands that exist."""

from __future__ import annotations

import importlib.util

from clirun import run_cli

from scanner.faces import cli


def test_every_command_in_the_table_exists_and_is_listed() -> None:
    missing = [name for name, (module, _) in cli.COMMANDS.items() if importlib.util.find_spec(module) is None]
    assert missing == []  # `eval` named a module that never existed
    listed = run_cli("--help")
    assert listed.returncode == 0, listed.stderr
    commands = listed.stdout.split("Commands:", 1)[1]
    assert [line.split()[0] for line in commands.splitlines() if line.startswith("  ") and line.split()
            and line.split()[0] in cli.COMMANDS] == list(cli.COMMANDS)
    for name in cli.COMMANDS:
        done = run_cli(name, "--help")
        assert done.returncode == 0 and done.stdout.startswith(f"Usage: scanner {name}"), (name, done.stderr)
