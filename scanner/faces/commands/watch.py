"""`scanner watch DIR...`: check every new or changed file against a protected index."""

from __future__ import annotations

import json
import signal
import sys
import threading
from pathlib import Path

import click

from scanner.core.display import printable, readable
from scanner.faces.commands.options import index_option, ocr_option, password_options, quiet_option, semantic_option


@click.command(name="watch")
@click.argument("dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@index_option
@click.option("--jsonl", is_flag=True, help="One JSON alert a line on stdout.")
@click.option("--once", is_flag=True, help="Catch up, check what is there, then exit (1 if any alert).")
@click.option("--polling", is_flag=True, help="Poll instead of OS events (network shares).")
@click.option("--min-words", type=click.IntRange(1, 10_000), default=12, show_default=True,
              help="A shared passage this long raises an alert.")
@click.option("--min-containment", type=click.FloatRange(0, 1), default=0.5, show_default=True,
              help="Share of a protected document found in a file that raises an alert.")
@click.option("--threshold", type=click.FloatRange(0, 1), default=0.5, show_default=True,
              help="Resemblance to a protected document that raises an alert.")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=2, show_default=True, help="Worker processes.")
@click.option("--settle", type=click.FloatRange(0.05, 60), default=0.25, show_default=True,
              help="Seconds a file must stay unchanged before it is checked.")
@click.option("--timeout", type=click.FloatRange(1, 3600), default=60, show_default=True,
              help="Seconds a worker may spend on one file before it is killed and the file reported.")
@click.option("--exec", "exec_command", default=None,
              help="Run CMD per alert, alert JSON on stdin, SCANNER_ALERT_PATH set (no shell).")
@click.option("--add", is_flag=True, help="Also add checked files to the index.")
@click.option("--min-severity", type=click.Choice(["low", "medium", "high"]), default="low", show_default=True,
              help="Raise only alerts of this severity or above (high: over 30 % of a protected document; "
                   "medium: a passage of 30 words or more; low: shorter passages).")
@click.option("--allow-index", type=click.Path(dir_okay=False), default=None,
              help="Index of text that never alerts (licences, notices, passages allowed with `scanner allow`); "
                   "default: INDEX's allow list (protected.allow.db beside protected.db) when it exists.")
@click.option("--boilerplate-share", type=click.FloatRange(0, 1), default=0.1, show_default=True,
              help="A passage found in this share of the protected documents (3 at least) is their own "
                   "boilerplate and does not alert.")
@ocr_option
@password_options
@semantic_option
@quiet_option
def command(dirs: tuple[Path, ...], index_path: str, jsonl: bool, once: bool, polling: bool, min_words: int,
            min_containment: float, threshold: float, jobs: int, settle: float, timeout: float,
            exec_command: str | None, add: bool, min_severity: str, allow_index: str | None,
            boilerplate_share: float, ocr: bool, ocr_languages: str, passwords: tuple[str, ...], semantic: bool,
            quiet: bool) -> int:
    """Watch DIR... and alert when protected text turns up in a new or changed file."""
    from scanner.core.errors import IndexStoreError
    from scanner.services.watch import Alert, Watcher, WatchEvent, WatchOptions
    from scanner.services.watch.allow import existing_allow_index

    if not Path(index_path).exists():
        raise IndexStoreError(f"no index at {index_path}: index the protected documents first "
                              f"(scanner scan DIR --index {index_path})")
    options = WatchOptions(min_words=min_words, min_containment=min_containment, threshold=threshold,
                           settle=settle, jobs=jobs, timeout=timeout, polling=polling, add=add,
                           exec_command=exec_command, ocr=ocr, ocr_languages=ocr_languages, passwords=passwords,
                           semantic=semantic,
                           min_severity=min_severity,
                           allow_index=allow_index or existing_allow_index(index_path),
                           boilerplate_share=boilerplate_share)
    out_lock = threading.Lock()

    def on_alert(alert: Alert) -> None:
        with out_lock:
            if jsonl:
                sys.stdout.write(json.dumps(alert.to_json(), ensure_ascii=False) + "\n")
            elif alert.followup:
                sys.stdout.write(f"ALERT {alert.to_json()['time']} {alert.severity}: {len(alert.paths)} more "
                                 f"cop{'y' if len(alert.paths) == 1 else 'ies'} of {printable(alert.path)}: "
                                 + ", ".join(printable(p) for p in alert.paths[:5])
                                 + (f" and {len(alert.paths) - 5} more" if len(alert.paths) > 5 else "") + "\n")
            else:
                best = alert.matches[0]
                where = printable(best.get("member", alert.path))  # a leak inside an archive or mail names its member
                sys.stdout.write(f"ALERT {alert.to_json()['time']} {alert.severity}: {where}: protected text from "
                                 f"{printable(best['path'])} ({len(alert.matches)} source(s); "
                                 f"longest passage {best['longest_passage_words']} words, "
                                 f"{100 * best['share_of_protected']:.0f}% of that document; "
                                 f"rule: {', '.join(best['rules'])})\n")
            sys.stdout.flush()

    def on_event(event: WatchEvent) -> None:
        if quiet or event.kind == "checked":
            return
        where = f"{printable(event.path)}: " if event.path else ""
        click.echo(f"scanner watch: {where}{readable(event.message)}", err=True)

    watcher = Watcher(index_path, [str(d) for d in dirs], options, on_alert=on_alert, on_event=on_event)
    # SIGTERM (a service manager stopping us) is a normal stop: exit 0. SIGINT (Ctrl-C) is an
    # interruption: exit 130. Either way the observer is stopped and the workers joined first.
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    interrupted = False
    try:
        watcher.start(observe=not once)
        while not stop.is_set() and watcher.running:
            if once and watcher.wait_idle(0.2):
                break
            if not once:
                stop.wait(0.5)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        try:
            watcher.stop()
        except KeyboardInterrupt:  # a second Ctrl-C while stopping: stopping goes on
            watcher.stop()
            interrupted = True
        signal.signal(signal.SIGTERM, previous)
    counters = watcher.counters
    if not quiet:
        copies = f" ({counters.copies} more cop{'y' if counters.copies == 1 else 'ies'})" if counters.copies else ""
        click.echo(f"scanner watch: {counters.checked} checked, {counters.alerts} alert(s){copies}, "
                   f"{counters.errors} error(s)", err=True)
    if interrupted:
        return 130
    if watcher.error is not None:
        raise watcher.error
    if once and (counters.alerts or counters.copies):  # protected text in a file: findings
        return 1
    return 0
