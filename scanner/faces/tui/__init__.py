"""The Textual interface; the only package that imports Textual."""

from scanner.faces.tui.app import make_app

__all__ = ["make_app"]
