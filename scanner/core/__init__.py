"""The foundation every layer may import: records (`model`), the exception tree
(`errors`), parameters (`config`) and safe display of evidence names (`display`).
Pure Python, no I/O, no third-party imports."""
