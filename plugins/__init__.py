"""Built-in extractor plugins, registered through the same pluggy manager as
third-party ones (see `scanner.sources.plugins.make_plugin_manager`)."""

BUILTIN_MODULES: tuple[str, ...] = (
    "scanner_plugins.text",
    "scanner_plugins.html",
    "scanner_plugins.pdf_pdfminer",
    "scanner_plugins.pdf_pdfium",
    "scanner_plugins.office",
    "scanner_plugins.eml",
)
