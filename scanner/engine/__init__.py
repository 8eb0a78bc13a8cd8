"""The science, pure numpy: canonicalization, fingerprints, shingles and sketches
(Broder), Coates signatures, passage alignment, clustering. No I/O: every function
takes text or arrays and returns values, so each is tested against the papers alone.
A new sketch or measure goes here."""
