"""scanner: find copies, near-copies and lifted passages among documents.

Implements Broder's resemblance and containment (1997) and Coates'
edit-distance signatures (2011) over a local SQLite index.
"""

__version__ = "0.1.0"
