"""Watch folders for leaks of protected documents.

Every new, changed or moved-in file under the watched folders is checked
against an index of protected documents; when protected text turns up in it,
an alert is raised (callback), stored in the index's `alerts` table and, if
asked, handed to a hook command.

How a file travels (watchdog's habits; docs/WATCH.md):

* the watchdog handler only records the path and the time of the event;
* a coordinator thread stats a path at once, and again once it has been quiet
  (no event) for `settle` seconds: only a file whose size and mtime are the
  same in both stats, with no event between them, is checked, so a file
  written slowly is checked once, complete;
* extraction and matching run in a bounded pool of worker processes, one file
  per worker at a time, each with an address-space cap and a wall-clock budget
  (the scan service's rules): a hostile file costs one worker, never the watcher;
* the coordinator alone writes to the index (alerts and `watch_state`, which
  lets a restart catch up on files changed while nothing was watching);
* hooks run on their own thread, so a slow hook never delays the next check.

The package: `records` (options, alerts, events), `checking` (the worker side: one file
extracted and matched), `hooks` (`--exec`), `watcher` (the coordinator and the one writer).
No click, no Textual: the CLI and the TUI are both thin faces over `Watcher`.
"""

from scanner.services.watch.checking import CheckedFile, check_file, is_leak
from scanner.services.watch.records import (
    TEMP_PATTERNS,
    Alert,
    WatchCounters,
    WatchEvent,
    WatchOptions,
    is_ignored,
    iso_time,
)
from scanner.services.watch.watcher import Watcher

__all__ = ["TEMP_PATTERNS", "Alert", "CheckedFile", "WatchCounters", "WatchEvent", "WatchOptions",
           "Watcher", "check_file", "is_ignored", "is_leak", "iso_time"]
