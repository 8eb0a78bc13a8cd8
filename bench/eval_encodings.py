"""How texts in legacy one-byte code pages are read: sentences written for this in 16 languages, and this
machine's own non-UTF-8 text files, by this tree's decoder and by another commit's in the same run.

    .venv/bin/python bench/eval_encodings.py [--git REV] [--roots DIR ...] [--timing]

1. The sentences (one each, about 150 characters or 50 East Asian ones, written for this evaluation: Western,
   Central and Eastern European languages, Greek, Turkish, Baltic, Chinese, Japanese, Korean) are encoded in each
   code page their language is written in, cut at 10, 30, 50, 80 and 120 characters and whole, and decoded: how
   many read back exactly as written.
2. Every file under the roots (default: /usr/share/doc, /usr/share/vim, /usr/share/X11/locale, CPython's
   test folder), gzip undone, that holds no NUL in its first 4 KB and is not valid UTF-8: which encoding each
   decoder names, and the first words that differ between the two readings.
3. `--timing`: both decoders over those files, three rounds alternating.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import os
import re
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scanner.sources.extract import encoding as this_tree

SENTENCES = {
    "fr": ("Le conseil municipal a décidé d’agrandir le quai l’année prochaine. Les travaux commenceront au "
           "printemps et coûteront près de deux millions d’euros, selon le maire.", ["cp1252", "latin_1", "mac_roman"]),
    "de": ("Die Hafenverwaltung hat beschlossen, den Kai im nächsten Jahr zu erweitern. Die Arbeiten beginnen im "
           "Frühjahr und kosten rund zwei Millionen Euro, sagte der Bürgermeister.",
           ["cp1252", "latin_1", "mac_roman"]),
    "es": ("La autoridad portuaria decidió ampliar el muelle el próximo año. Las obras comenzarán en primavera y "
           "costarán unos dos millones de euros, según el alcalde.", ["cp1252", "latin_1"]),
    "pt": ("A autoridade portuária decidiu ampliar o cais no próximo ano. As obras começarão na primavera e "
           "custarão cerca de dois milhões de euros, segundo o prefeito.", ["cp1252", "latin_1"]),
    "sv": ("Hamnstyrelsen har beslutat att bygga ut kajen nästa år. Arbetet börjar på våren och kostar omkring två "
           "miljoner kronor, enligt borgmästaren.", ["cp1252", "latin_1"]),
    "fi": ("Satamahallitus päätti laajentaa laituria ensi vuonna. Työt alkavat keväällä ja maksavat noin kaksi "
           "miljoonaa euroa, kertoi pormestari.", ["cp1252", "latin_1"]),
    "pl": ("Zarząd portu postanowił rozbudować nabrzeże w przyszłym roku. Prace rozpoczną się wiosną, a koszt "
           "inwestycji wyniesie około dwóch milionów złotych, powiedział burmistrz.", ["cp1250", "iso8859_2"]),
    "cs": ("Správa přístavu se rozhodla příští rok rozšířit nábřeží. Práce začnou na jaře a náklady dosáhnou "
           "zhruba dvou milionů korun, uvedl starosta.", ["cp1250", "iso8859_2"]),
    "hu": ("A kikötő vezetősége úgy döntött, hogy jövőre bővíti a rakpartot. A munkálatok tavasszal kezdődnek, és "
           "mintegy kétmillió euróba kerülnek, mondta a polgármester.", ["cp1250", "iso8859_2"]),
    "ro": ("Autoritatea portuară a decis să extindă cheiul anul viitor. Lucrările vor începe în primăvară și vor "
           "costa aproximativ două milioane de euro, a spus primarul.", ["cp1250", "iso8859_2"]),
    "hr": ("Lučka uprava odlučila je sljedeće godine proširiti gat. Radovi počinju u proljeće i koštat će oko dva "
           "milijuna eura, rekao je gradonačelnik.", ["cp1250", "iso8859_2"]),
    "tr": ("Liman idaresi gelecek yıl iskeleyi genişletmeye karar verdi. Çalışmalar ilkbaharda başlayacak ve "
           "yaklaşık iki milyon avroya mal olacak, dedi belediye başkanı.", ["cp1254", "iso8859_9"]),
    "lt": ("Uosto direkcija nusprendė kitais metais išplėsti prieplauką. Darbai prasidės pavasarį ir kainuos apie "
           "du milijonus eurų, sakė meras.", ["cp1257", "iso8859_13"]),
    "ru": ("Портовое управление решило расширить причал в следующем году. Работы начнутся весной и обойдутся "
           "примерно в два миллиона рублей, сообщил мэр города.", ["cp1251", "koi8_r", "iso8859_5", "cp866"]),
    "uk": ("Портова адміністрація вирішила розширити причал наступного року. Роботи розпочнуться навесні й "
           "коштуватимуть близько двох мільйонів гривень, повідомив мер.", ["cp1251", "koi8_u"]),
    "bg": ("Пристанищната администрация реши да разшири кея догодина. Работите ще започнат през пролетта и ще "
           "струват около два милиона лева, каза кметът.", ["cp1251"]),
    "el": ("Η λιμενική αρχή αποφάσισε να επεκτείνει την προβλήτα τον επόμενο χρόνο. Οι εργασίες θα ξεκινήσουν "
           "την άνοιξη και θα κοστίσουν περίπου δύο εκατομμύρια ευρώ, είπε ο δήμαρχος.", ["cp1253", "iso8859_7"]),
    "zh": ("港务局决定明年扩建码头。工程将于春季开工，预计耗资约两百万元，市长在市议会上表示支持这项决定。",
           ["gb2312", "gbk", "gb18030"]),
    "zh-Hant": ("港務局決定明年擴建碼頭。工程將於春季開工，預計耗資約兩百萬元，市長在市議會上表示支持這項決定。",
                ["big5"]),
    "ja": ("港湾局は来年、埠頭を拡張することを決定した。工事は春に始まり、費用は約二百万ユーロになると市長は述べた。",
           ["shift_jis", "euc_jp"]),
    "ko": ("항만청은 내년에 부두를 확장하기로 결정했다. 공사는 봄에 시작되며 약 이백만 유로가 들 것이라고 "
           "시장이 말했다.", ["euc_kr"]),
}
CUTS = (10, 30, 50, 80, 120, None)
DEFAULT_ROOTS = ("/usr/share/doc", "/usr/share/vim", "/usr/share/X11/locale",
                 str(Path(sysconfig.get_paths()["stdlib"]) / "test"))
_WORD_BEYOND_ASCII = re.compile(r"\w*[^\x00-\x7f]\w*")


def other_decoder(rev: str) -> ModuleType:
    """`scanner/sources/extract/encoding.py` as commit `rev` had it, loaded beside this tree's."""
    source = subprocess.run(["git", "show", f"{rev}:scanner/sources/extract/encoding.py"], check=True,
                            capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1]).stdout
    folder = Path(tempfile.mkdtemp())
    (folder / "other_encoding.py").write_text(source)
    spec = importlib.util.spec_from_file_location("other_encoding", folder / "other_encoding.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read(decoder: ModuleType, data: bytes) -> tuple[str | None, str]:
    try:
        text, encoding = decoder.decode_text(data)
        return text, encoding
    except Exception as exc:  # noqa: BLE001 - a refusal is an outcome here
        return None, type(exc).__name__


def sentences_read(decoder: ModuleType) -> tuple[int, int, list[str]]:
    """(read back as written, tried, which were not)."""
    good, tried, missed = 0, 0, []
    for language, (text, codecs) in SENTENCES.items():
        for codec in codecs:
            for cut in CUTS:
                piece = text[:cut] if cut else text
                try:
                    data = piece.encode(codec)
                except UnicodeEncodeError:
                    continue
                tried += 1
                if read(decoder, data)[0] == piece:
                    good += 1
                else:
                    missed.append(f"{language}/{codec}/{cut or 'whole'}")
    return good, tried, missed


def machine_files(roots: list[str]) -> list[tuple[str, bytes]]:
    """This machine's text-like files that are not UTF-8."""
    found = []
    for root in roots:
        for folder, _, names in os.walk(root):
            for name in names:
                path = os.path.join(folder, name)
                try:
                    if os.path.islink(path) or os.path.getsize(path) > 2_000_000:
                        continue
                    data = Path(path).read_bytes()
                    if path.endswith(".gz"):
                        data = gzip.decompress(data)
                    data.decode("utf-8")
                    continue
                except UnicodeDecodeError:
                    pass
                except (OSError, EOFError, gzip.BadGzipFile):
                    continue
                if data and b"\0" not in data[:4096]:
                    found.append((path, data))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--git", default="HEAD~1", help="the commit whose decoder is compared (default HEAD~1)")
    parser.add_argument("--roots", nargs="*", default=list(DEFAULT_ROOTS))
    parser.add_argument("--timing", action="store_true")
    args = parser.parse_args()
    other = other_decoder(args.git)
    for label, decoder in ((args.git, other), ("this tree", this_tree)):
        good, tried, missed = sentences_read(decoder)
        print(f"sentences, {label}: {good} of {tried} read back as written; not: {' '.join(missed) or '-'}")
    files = machine_files(args.roots)
    differ = []
    for path, data in files:
        (before, named_before), (after, named_after) = read(other, data), read(this_tree, data)
        if (before, named_before) != (after, named_after):
            words = list(zip(_WORD_BEYOND_ASCII.findall(before or ""), _WORD_BEYOND_ASCII.findall(after or "")))
            differ.append((path, named_before, named_after, [pair for pair in words if pair[0] != pair[1]][:4]))
    print(f"\nthis machine's non-UTF-8 text files: {len(files)}; read differently by {args.git} and this tree: "
          f"{len(differ)}")
    for path, named_before, named_after, words in differ:
        print(f"  {path}\n    {named_before} -> {named_after}  {words}")
    if args.timing:
        for _ in range(3):
            for label, decoder in ((args.git, other), ("this tree", this_tree)):
                started = time.perf_counter()
                for _, data in files:
                    read(decoder, data)
                print(f"timing, {label}: {time.perf_counter() - started:.2f} s for {len(files)} files")


if __name__ == "__main__":
    main()
