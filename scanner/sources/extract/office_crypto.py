"""Password-protected DOCX, XLSX and PPTX: an OLE2 compound file holding the document as an EncryptedPackage
(ECMA-376 agile or standard encryption), typed `application/encrypted`. Decrypted with the passwords given to
the scan (msoffcrypto-tool, imported only then), the document inside is read like any other."""

from __future__ import annotations

import io
from collections.abc import Sequence

from scanner.core.errors import ExtractionError


def decrypt_ooxml(data: bytes, passwords: Sequence[str]) -> bytes | None:
    """The document inside, opened with the first of `passwords` its key verifies; None when none does."""
    import msoffcrypto
    from msoffcrypto.exceptions import InvalidKeyError

    for password in passwords:
        try:
            office = msoffcrypto.OfficeFile(io.BytesIO(data))
            office.load_key(password=password, verify_password=True)
            inside = io.BytesIO()
            office.decrypt(inside)
        except InvalidKeyError:
            continue
        except Exception as exc:  # a damaged package breaks the decryptor anyhow
            raise ExtractionError(f"password-protected Office document that cannot be decrypted: "
                                  f"{type(exc).__name__}: {exc}", status="corrupt") from exc
        return inside.getvalue()
    return None
