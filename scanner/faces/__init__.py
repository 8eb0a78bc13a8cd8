"""How people and programs drive the services: the click CLI (`cli`, `commands`), the Textual
TUI (`tui`, the only package that imports Textual) and the report formats (`report`). A new
command, screen or report format goes here."""
