"""Built-in extractor plugins, registered through the same pluggy manager as
third-party ones (see `scanner.plugins.make_plugin_manager`)."""

BUILTIN_MODULES: tuple[str, ...] = (
    "plugins.text",
    "plugins.html",
    "plugins.pdf_pdfminer",
    "plugins.pdf_pdfium",
    "plugins.office",
    "plugins.eml",
)
