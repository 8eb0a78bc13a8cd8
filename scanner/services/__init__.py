"""What the tool does, independent of how it is driven: `scan` (crawl, extract and sketch in
workers, one writer), `findings` (clusters and containment pairs of an index), `check` (where a
text comes from), `watch` (leak alerts). Faces (CLI, TUI, reports) call these; a new job goes here."""
