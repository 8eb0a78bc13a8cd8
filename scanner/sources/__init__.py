"""Where text comes from: the crawl (files, sizes, times), type detection by content,
extraction through plugins (`plugins` holds the hookspecs; the built-in extractors live
in the top-level `plugins/` folder, installed as `scanner_plugins`). A new extractor is a
plugin; a new kind of container or crawl rule goes here."""
