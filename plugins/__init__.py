"""Built-in extractor and container plugins, registered through the same pluggy manager as
third-party ones (see `scanner.sources.plugins.make_plugin_manager`)."""

BUILTIN_MODULES: tuple[str, ...] = (
    "scanner_plugins.text",
    "scanner_plugins.html",
    "scanner_plugins.pdf_pdfminer",
    "scanner_plugins.pdf_pdfium",
    "scanner_plugins.office",
    "scanner_plugins.eml",
    "scanner_plugins.rtf",
    "scanner_plugins.doc",
    "scanner_plugins.ocr",
    "scanner_plugins.archives",
    "scanner_plugins.libarchive_formats",
    "scanner_plugins.mailbox",
    "scanner_plugins.msg",
    "scanner_plugins.pst",
    "scanner_plugins.sqlite_db",
    "scanner_plugins.iwork",
    "scanner_plugins.tnef",
    "scanner_plugins.warc",
    "scanner_plugins.ppt",
    "scanner_plugins.pictures",
    "scanner_plugins.notebook",
    "scanner_plugins.svg",
    "scanner_plugins.xmldoc",
    "scanner_plugins.latex",
)
