"""Generated evidence for the tests: English-like documents with planted reuse, no corpus needed.

Every text here comes from a seeded generator, so a fresh clone builds the same
documents the same way (no corpus from outside the repository, nothing downloaded):

- `prose(seed, words, topic)`: sentences from a small English grammar over
  common words (determiners, pronouns, prepositions, conjunctions, nouns,
  verbs, adjectives, adverbs), with Zipf-like word frequencies, a few topic
  words made more frequent, invented proper names, numbers and years,
  commas, and paragraphs. Character and word statistics are those of
  English prose; two documents share common phrases ("of the", "in the
  town") but, unless a passage was planted, no long run of words.
- `documents(count, ...)`: unrelated documents of chosen sizes.
- `text_alignment_pairs(...)`: PAN-style text-alignment pairs (a suspicious
  and a source document, with the character offsets of every planted case),
  verbatim ("none"), reworded ("random": words replaced, dropped, added and
  locally shuffled, as PAN-13's random obfuscation), or without reuse
  between documents on the same topic ("unrelated").
- `build_corpus_tree(root, copies)`: a folder of `copies` variants of a few
  hundred documents (several MB), for the crash and concurrency tests that
  need a scan long enough to be interrupted.
- `mixed_texts()`: documents with what real collections hold besides plain
  prose (typography, ligatures, accents, control and format characters,
  CRLF, other scripts), for the canonicalizer's pinned outputs.
- `news_page(seed)`, `html_page(...)`: web pages around an article (menus,
  scripts, sidebars, forms, footers), with the article's gold text.
- `zipf_writer(seed)`: a writer of text of a given length in made-up words
  with Zipf-like frequencies (no grammar), for the containment-ratio test
  and bench.

Real PDFs are not generated here: tests/fixtures/pdf holds a few openly
licensed ones, and tests/pdfgen.py writes text PDFs, encrypted or not.

Generation is memoised: the same call in one test session costs nothing twice.
"""

from __future__ import annotations

import functools
import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# --------------------------------------------------------------------------
# the vocabulary: common English words, each list in rough order of frequency

# boilerplate held by many documents of a test (made up here, as every text of this module)
NOTICE = ("This program is free software: you can redistribute it and/or modify it under the terms of the "
          "licence published by the foundation, either version three of the licence or any later version, "
          "and it comes with absolutely no warranty of any kind.")

DETERMINERS = ("the the the the the a a an this that his her its their our these those every some each no any "
               "many several most one another such both all either neither").split()
PREPOSITIONS = ("of of of in in to for with on at by from about into over after under between through during "
                "without before against among across upon within beyond toward along behind near since around "
                "beside above below despite beneath throughout inside outside past").split()
CONJUNCTIONS = "and and but or yet so while because although when since until whereas though once unless".split()
PRONOUNS = "it he she they we you I someone everyone nobody".split()
MODALS = "would could might will must should may can shall".split()
NOUNS = """
time year people way day man woman child world life hand part place case week company system program question
work government number night point home water room mother area money story fact month lot right study book eye
job word business issue side kind head house service friend father power hour game line end member law car city
community name president team minute idea kid body information back parent face level office door health
person art war history party result change morning reason research girl boy moment air teacher force education
foot age policy process music market sense nation plan college interest death experience effect class control
care field development role effort rate heart drug show leader light voice wife police mind price report decision
son view relationship town road arm difference value building action model season society tax director position
player record paper space ground form event official matter center couple site project activity star table need
court oil situation cost industry figure street image phone data picture practice piece land product doctor wall
patient worker news test movie north love support technology step baby computer type attention film tree source
organization hair window evidence population river island bridge harbor valley mountain forest garden
village church school letter journey summer winter spring autumn evening ship captain soldier farmer
merchant king queen army battle council castle bread wheat cattle horse coast shore storm rain wind snow
fire stone iron gold silver coal engine railway station factory mill printer newspaper editor author poem novel
chapter page sentence library museum painting portrait theatre concert song dance festival harvest supper dinner
kitchen chair bed lamp clock candle key box basket bottle glass cup plate knife rope wire wheel cart wagon
boat sail anchor map compass lantern blanket coat boot hat glove pocket coin debt wage rent loan bank trade
contract treaty border province county parish district colony empire republic parliament senate election vote
candidate campaign speech debate committee minister judge jury lawyer trial prison crime witness victim thief
sailor fisherman miner weaver baker butcher carpenter blacksmith tailor servant guest neighbour stranger visitor
traveller pilgrim scholar student professor lecture lesson exam degree theory experiment instrument telescope
microscope specimen sample measure weight distance speed angle surface layer edge corner circle square
pattern colour shadow sound silence noise smell taste touch memory dream fear hope doubt faith courage pride
shame anger grief joy comfort danger safety freedom duty honour justice mercy wisdom habit custom tradition
ceremony wedding funeral birth illness fever cure remedy medicine hospital nurse surgeon wound bone blood skin
account address advantage agreement amount animal answer apple argument army arrangement attempt audience
authority balance band base basis beach bean bear beauty bell belt bench bird birthday blade board bone border
branch brick brother budget burden cabin cake camera canal capital card career carpet cause chain chamber
champion channel character charge chest chicken choice citizen claim clerk cliff cloth cloud club collar
column comment commerce companion complaint concern condition conference confidence conflict congress
connection consequence constitution construction content contest context copy cotton cottage counter courage
cousin crew crop crowd crown culture current curtain cushion customer cycle daughter deal decade deck defence
delay demand department deposit desert design desk detail device diary dictionary diet direction discovery
disease dish display dispute document dog dollar doubt drawer dress drink driver dust duty eagle earth economy
edition element emergency emotion empire employer engineer entrance envelope environment error essay estate
exchange exhibition expansion expedition expert export extent fabric failure fame family farm fashion feast
feather fee fence fiction fight finger fish flag flame fleet flight flood floor flour flower fog folk food
fortune foundation fountain fragment frame fruit fuel function fund furniture future gallery gap gate gift
glimpse goat governor grain grass grave greeting group growth guard guide guitar gun hall hammer handle
harmony hat heap heat height hero highway hill hint holiday honey hook horizon host hotel household hunger
hunter hut ice identity income independence index ink inn insect inspector institution insurance intention
invention investment invitation iron item jacket jail jewel joke journal judgement juice jungle kettle kingdom
knee knot label labour ladder lady lake language laughter lawn leaf league leather leg legend length lens
liberty licence lid limit lion lip liquid list load lock lodge log loss luggage lunch machine magazine
magistrate majority manager manner manuscript marble margin mark marriage mass master match meal meaning
meat medal meeting melody memorial mess message metal method middle milk mineral mirror mission mistake mixture
monk monument mood moon motion motor mouth mud muscle mystery nail native navy neck needle nerve nest net
network noon note notice novel oak object ocean offer officer opinion opportunity orange orchard order origin
outcome oven owner ox pace package pain pair palace pan panel parade pardon parent partner passage passenger
path pause payment peace peak pearl pen pencil pension pepper period permission pet philosophy photograph
pier pig pile pillow pin pipe pit pity planet plant platform pleasure plot plough poet poison pole pond pool
port porter post pot potato pound poverty powder practice prayer preface presence press pressure prince
principle print priority prize profit progress promise proof property proportion proposal prospect protest
province pump punishment pupil purpose puzzle quality quarter quarrel rabbit race radio rail range rank rat
ray reader receipt reference reform region relief religion remark rescue reserve resident resistance
resource respect response rest review reward rhythm rice riddle ring rise risk rival rock roof root rose
route row rule rumour sack sailor salt sand scale scene schedule scheme science screen sea seat secret
secretary section security seed sequence series session settlement shade shape share sheep shelf shell
shelter shift shirt shock shop shoulder sight signal signature silk sister sketch sky slave sleeve slope
smoke snake society sock soil solution song soul soup speaker spirit sport spot staff stage stair stake stamp
standard statement statue steam steel stem stick stock stomach storage stove strain strategy straw stream
strength string structure struggle style subject substance suburb success sugar suit sun supply surprise
survey suspicion sword symbol sympathy tail tale talent tank tape target task tea tear temper temple tendency
tent term territory text thread threat throat throne thumb ticket tide timber tin title tobacco toe tongue
tool tooth topic tower toy track tract tragedy train transport tray treasure treatment trial tribe trick
troop trouble truck trunk trust truth tube tune tunnel turn twin umbrella uncle union unit universe valve
van variety vessel victory vine violin virtue vision volume voyage waist wall warmth warning waste wave wealth
weapon weather web wedding weed whale wheel whip whistle widow width willow wing wire wish witness wolf wood
wool workshop wound wreck yard yield youth zone
""".split()
VERBS = """
say make take come see know give find think tell become leave feel bring begin keep hold write stand hear
let mean set meet run pay sit speak lie lead read grow lose fall send build understand draw break spend rise
drive buy wear choose seek throw catch deal win forget feed shake strike hang flee swear sink hide lay bend
carry open close watch follow reach raise turn move live believe allow remember consider appear serve
expect create offer decide return describe join add change cover cross enter explain finish gather guard
hunt improve judge land mark notice order paint plant pull push repair rescue settle sign study test trust
visit walk want warn wash welcome wish work worry answer arrive ask borrow burn call clean collect count dance
deliver earn examine fill fix form greet hurry imagine invite jump kick laugh list load mend name need obey
pack pass pick play pour pray print promise question record refuse rest roll rule rush save search shout
smile sort stay stop surround talk thank trade travel tremble wait wander weigh whisper accept achieve acquire
admire admit adopt advise afford agree aim alter amuse announce annoy apply appoint approve argue arrange
arrest attach attack attend attract avoid bake balance bathe beg behave belong bless boil bore bother bounce
breathe brush bury calculate camp care cause celebrate challenge charge chase cheer chew claim clap climb
coach combine comfort command compare compete complain complete concentrate concern confess confuse connect
contain continue copy correct cough crash crawl cure cycle damage decorate defend delay delight demand depend
deserve destroy detect develop disagree disappear discover dislike divide doubt drag dream drop dry educate
embarrass employ empty encourage end enjoy escape establish estimate excite excuse exist expand explode
express extend face fade fail fasten fear fence fetch file fire flash float flood flow fold force frighten
gaze glow grab grant grin guarantee guess handle happen harm hate heal heat help hope hover hug identify
ignore include increase inform inject injure insist inspect instruct intend interest interrupt introduce
invent irritate itch kneel knock knot label last launch lift like limit listen locate lock long look love
manage march marry match matter measure melt memorise milk mine miss mix moan multiply murder nail nod note
observe obtain occupy occur offend operate own paddle park part pause peel perform permit persuade phone
place please plan plead polish possess post practise prefer prepare present preserve press pretend prevent
proceed produce protect provide publish punch punish purchase qualify race rain realise receive recognise
recommend reduce reflect regret reign reject rejoice relax release rely remain remove rent replace reply
report request require resist respect respond restore retire reveal review ring risk rob rot rub ruin sail
satisfy scare scatter scold scrape scratch scream screw seal select separate serve shelter shine shiver
shock shop sigh signal sin ski skip slip smash smell sneeze snow soothe sound spare spark sparkle spell spill
spoil spot spray sprout squeeze stamp stare start steer step stir store strengthen stretch strip stuff succeed
suck suffer suggest suit supply support suppose surprise suspect suspend switch tame tap taste teach tease
telephone tempt terrify thaw tick tickle tie time tip tire touch tour tow train transport trap treat trick
trip trot trouble try tug tumble type undress unfasten unite unlock unpack untidy use vanish visit wail warm
waste water wave weep wink wipe wobble wonder wrap wreck wrestle wriggle yawn yell zip
""".split()
IRREGULAR = dict(p.split(":") for p in """
say:said make:made take:took come:came see:saw know:knew give:gave find:found think:thought tell:told
become:became leave:left feel:felt bring:brought begin:began keep:kept hold:held write:wrote stand:stood
hear:heard let:let mean:meant set:set meet:met run:ran pay:paid sit:sat speak:spoke lie:lay lead:led read:read
grow:grew lose:lost fall:fell send:sent build:built understand:understood draw:drew break:broke spend:spent
rise:rose drive:drove buy:bought wear:wore choose:chose seek:sought throw:threw catch:caught deal:dealt
win:won forget:forgot feed:fed shake:shook strike:struck hang:hung flee:fled swear:swore sink:sank hide:hid
lay:laid bend:bent teach:taught ring:rang shine:shone sing:sang sleep:slept weep:wept
""".split())
ADJECTIVES = """
good new first last long great little own other old right big high different small large next early young
important few public bad same able local sure free better true whole real best human hard clear recent certain
major personal open red difficult available likely short single medical current wrong private past foreign fine
common poor natural significant similar hot dead central happy serious ready simple left physical general
environmental financial blue democratic dark various entire close legal religious cold final main green nice
huge popular traditional cultural wide quiet narrow heavy light bright pale deep shallow steep gentle rough
smooth sharp dull sweet bitter sour fresh stale rich plain strange familiar distant nearby ancient modern
northern southern eastern western rural urban wooden golden silver broken empty full busy idle
careful careless brave cruel kind honest proud humble famous obscure rare frequent sudden gradual silent loud
wet dry warm cool calm wild tame strong weak thin thick broad tall brief endless sacred absent abundant
accurate active actual acute adequate admirable advanced afraid aggressive alert alive ambitious amusing
angry anxious apparent appropriate arbitrary ashamed asleep attractive awkward bare bold bored brilliant
broad bumpy capable casual cautious cheap cheerful chief civil classic clever clumsy coarse colourful
comfortable commercial compact competent complete complex conscious considerable constant content convenient
cosy crazy creative crisp crowded crucial curious dangerous daring dear decent delicate delightful dense
desperate determined diligent dirty distinct dizzy domestic double doubtful drowsy dusty eager eager
economic educational efficient elaborate elderly elegant eloquent eminent enormous equal essential eternal
ethical evident exact excellent excessive exotic expensive explicit extreme faint fair faithful false
fancy fast fatal fearful feeble fierce filthy firm flat flexible fluent foolish formal former fortunate
fragile frank frantic frozen fruitful funny furious generous genuine giant glad glorious graceful gracious
grand grateful grave greedy grim guilty handsome harsh healthy helpful hidden hollow holy hopeful horrible
hostile humid hungry ideal identical ignorant ill immense immediate impatient imperial implicit impressive
incredible independent industrial inevitable infinite informal innocent intense internal invisible jealous
joint jolly junior just keen lame large lasting lazy lean legal lengthy liberal lively lonely loose lovely
loyal lucky lunar magnificent maritime massive mature mean mechanical mere mild military minor miserable
mobile moderate modest moist moral mutual mysterious naive nasty national naval neat necessary negative
nervous neutral noble normal notable numerous nervous obvious odd official optimistic oral ordinary organic
original outstanding overall painful parallel partial passive patient peaceful peculiar perfect permanent
pleasant polite political positive possible potential powerful practical precious precise pregnant
present pretty primary principal prior productive profound prominent prompt proper prosperous proud
pure purple radical random rapid rational raw realistic reasonable relevant reliable reluctant remarkable
remote respectable responsible restless rigid ripe risky robust romantic rotten royal rude rusty sad safe
savage scarce scientific secret secure selfish senior sensible sensitive severe shy sick silly sincere
skilful sleepy slight slim slippery sloppy smart sober social soft solar solid sole solemn sophisticated
sore sorry spare special specific splendid stable steady sticky stiff strict stubborn stupid subtle
successful sufficient suitable superb superior supreme surprising suspicious swift sympathetic tender tense
terrible thankful thirsty thorough tidy tight timid tiny tired tough tragic tremendous tricky typical ugly
ultimate uncertain unfair unhappy uniform unique universal unknown unlikely unusual upper upset urgent useful
useless usual vacant vague valid valuable vast verbal vertical vigorous violent virtual visible vital vivid
voluntary vulnerable wealthy weary weird wicked wise wonderful worthy wrong yellow youthful zealous
""".split()
ADVERBS = ("often never always soon still again perhaps rarely nearly already simply almost indeed merely "
           "hardly once twice together abroad apart ahead today yesterday later early").split()
SYLLABLES = ("ar be ca da el fa ga ha il jo ka lo ma ne or pa qui ro sa te ul va wi xa yo ze bro cla dre fli "
             "gra kro pla shi tre vor mon del lin ton ber wick ham ford ley by ton stead mar ville").split()


def _plural(noun: str) -> str:
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


def _ing(verb: str) -> str:
    if verb.endswith("ie"):
        return verb[:-2] + "ying"
    if verb.endswith("e") and not verb.endswith(("ee", "ye", "oe")):
        return verb[:-1] + "ing"
    return verb + "ing"


def _past(verb: str) -> str:
    if verb in IRREGULAR:
        return IRREGULAR[verb]
    if verb.endswith("e"):
        return verb + "d"
    if verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ied"
    return verb + "ed"


def _third(verb: str) -> str:
    return _plural(verb) if verb not in ("have", "be") else {"have": "has", "be": "is"}[verb]


def _adverb(adjective: str) -> str:
    if adjective.endswith("le"):
        return adjective[:-1] + "y"
    if adjective.endswith("y"):
        return adjective[:-1] + "ily"
    if adjective.endswith("ic"):
        return adjective + "ally"
    return adjective + "ly"


def _zipf(n: int, s: float, offset: float) -> list[float]:
    return list(itertools.accumulate(1.0 / (rank + offset) ** s for rank in range(n)))


# word classes -> (words, cumulative weights); content words are spread thin, as in real prose
_CLASSES: dict[str, list[str]] = {
    "D": DETERMINERS, "P": PREPOSITIONS, "C": CONJUNCTIONS, "R": PRONOUNS, "M": MODALS,
    "N": NOUNS, "NS": [_plural(n) for n in NOUNS], "V": [_past(v) for v in VERBS], "VB": VERBS,
    "VG": [_ing(v) for v in VERBS], "VS": [_third(v) for v in VERBS], "A": ADJECTIVES,
    "B": ADVERBS + [_adverb(a) for a in ADJECTIVES[::3]],
}
_CUM = {k: _zipf(len(v), 0.75 if k in ("N", "NS", "V", "VB", "VG", "VS", "A", "B") else 0.5, 8.0)
        for k, v in _CLASSES.items()}


@dataclass(frozen=True)
class _Style:
    """One document's voice: its topic words (more frequent than elsewhere), its invented names, its year."""

    topic: dict[str, list[str]]
    names: list[str]
    year: int


def _name(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()


def _style(topic: int, seed: int) -> _Style:
    trng = random.Random(f"topic {topic}")
    nouns, verbs = trng.sample(range(len(NOUNS)), 10), trng.sample(range(len(VERBS)), 5)
    words = {"N": [NOUNS[i] for i in nouns], "NS": [_CLASSES["NS"][i] for i in nouns],
             "A": trng.sample(ADJECTIVES, 6)}
    for cls in ("V", "VB", "VG", "VS"):
        words[cls] = [_CLASSES[cls][i] for i in verbs]
    drng = random.Random(f"names {seed}")
    return _Style(words, [_name(drng) for _ in range(8)], drng.randint(1650, 1990))


def _word(cls: str, rng: random.Random, style: _Style) -> str:
    if cls in style.topic and rng.random() < 0.05:
        return rng.choice(style.topic[cls])
    return rng.choices(_CLASSES[cls], cum_weights=_CUM[cls])[0]


def _noun_phrase(rng: random.Random, style: _Style, depth: int = 0) -> list[str]:
    roll = rng.random()
    if roll < 0.06:
        return [rng.choice(style.names)]
    if roll < 0.08:
        return [str(rng.choice((style.year + rng.randint(-30, 30), rng.randint(2, 900))))]
    plural = rng.random() < 0.3
    out = [rng.choice(("the", "the", "these", "those", "many", "some", "their", "our", "all", "no"))
           if plural else _word("D", rng, style)]
    if out[0] == "the" and plural and rng.random() < 0.3:
        out = []
    for _ in range(rng.choice((0, 0, 1, 1, 2))):
        out.append(_word("A", rng, style))
    out.append(_word("NS" if plural else "N", rng, style))
    if depth < 1 and rng.random() < 0.3:
        out += [_word("P", rng, style)] + _noun_phrase(rng, style, depth + 1)
    if out[0] in ("a", "an"):
        out[0] = "an" if out[1][0] in "aeiou" else "a"
    return out


def _verb_group(rng: random.Random, style: _Style) -> list[str]:
    roll = rng.random()
    if roll < 0.55:
        return [_word("V", rng, style)]
    if roll < 0.75:
        return [_word("M", rng, style), _word("VB", rng, style)]
    if roll < 0.85:
        return [rng.choice(("was", "were", "had been", "is", "are")), _word("VG", rng, style)]
    if roll < 0.93:
        return [rng.choice(("had", "has", "have")), _word("V", rng, style)]
    return [_word("VS", rng, style)]


def _clause(rng: random.Random, style: _Style) -> list[str]:
    words = [rng.choice(PRONOUNS)] if rng.random() < 0.25 else _noun_phrase(rng, style)
    if rng.random() < 0.15:
        words.append(_word("B", rng, style))
    words += _verb_group(rng, style)
    if rng.random() < 0.8:
        words += _noun_phrase(rng, style)
    for _ in range(rng.choice((0, 1, 1, 2))):
        words += [_word("P", rng, style)] + _noun_phrase(rng, style)
    if rng.random() < 0.15:
        words.append(_word("B", rng, style))
    return words


# stock phrases, so that unrelated documents share some 4-word runs, as real prose does
STOCK = """at the end of the|in the middle of the|on the other hand|for the first time|as a result of the|at the same
time|in the course of the|for the rest of the|by the end of the|on the edge of the|in the face of|one of the most|
at the top of the|in the case of the|for the sake of|at the beginning of the|in the eyes of the|on the basis of|
in the presence of|by the time the|as far as the|in spite of the|for a long time|from time to time|at the foot
of the|in the absence of|on the part of the|to the best of|with the help of the|in the history of the""".replace(
    "\n", " ").split("|")


def _sentence(rng: random.Random, style: _Style) -> str:
    words: list[str] = []
    if rng.random() < 0.06:
        words += rng.choice(STOCK).split() + _noun_phrase(rng, style)[-1:]
        words[-1] += ","
    elif rng.random() < 0.2:
        words += [_word("P", rng, style)] + _noun_phrase(rng, style)
        words[-1] += ","
    words += _clause(rng, style)
    for _ in range(rng.choice((0, 0, 1, 1, 2))):
        words[-1] += rng.choice((",", ",", "", ";"))
        words += [rng.choice(CONJUNCTIONS)] + _clause(rng, style)
    words[0] = words[0][:1].upper() + words[0][1:]
    return " ".join(words) + rng.choice((".", ".", ".", ".", ".", ".", "?", "!"))


@functools.lru_cache(maxsize=4096)
def prose(seed: int, words: int, topic: int | None = None) -> str:
    """About `words` words of English-like prose in paragraphs; the same arguments, the same text."""
    rng = random.Random(f"prose {seed}")
    style = _style(seed % 97 if topic is None else topic, seed)
    paragraphs: list[str] = []
    count = 0
    while count < words:
        sentences = []
        for _ in range(rng.randint(2, 6)):
            sentence = _sentence(rng, style)
            sentences.append(sentence)
            count += sentence.count(" ") + 1
            if count >= words:
                break
        paragraphs.append(" ".join(sentences))
    return "\n\n".join(paragraphs) + "\n"


def documents(count: int, seed: int = 0, low: int = 4_000, high: int = 12_000) -> list[str]:
    """`count` unrelated documents of `low` to `high` characters (roughly 6 characters a word)."""
    rng = random.Random(f"documents {seed}")
    out = []
    for i in range(count):
        size = rng.randint(low, high)
        text = prose(seed * 100_003 + i, size // 6 + 20)
        while len(text) < low:  # a short draw: top it up with more of the same voice
            text += "\n" + prose(seed * 100_003 + i + 7_919 * len(text), 100)
        out.append(text[: text.rfind(" ", 0, high) if len(text) > high else len(text)].rstrip() + "\n")
    return out


# --------------------------------------------------------------------------
# planted reuse with its ground truth


@dataclass(frozen=True)
class Case:
    """One planted passage: characters [this_offset, +this_length) of the suspicious document come from
    characters [source_offset, +source_length) of the source (PAN's annotation, same field names)."""

    this_offset: int
    this_length: int
    source_offset: int
    source_length: int

    @property
    def bounds(self) -> tuple[int, int, int, int]:
        return (self.this_offset, self.this_offset + self.this_length,
                self.source_offset, self.source_offset + self.source_length)


@dataclass(frozen=True)
class Pair:
    susp_name: str
    src_name: str
    susp: str
    src: str
    cases: tuple[Case, ...]
    obfuscation: str  # "none", "random" or "unrelated"


def _sentence_starts(text: str) -> list[int]:
    """Offsets where a sentence starts (after ". ", "? ", "! " or a paragraph break)."""
    starts = [0]
    for i in range(1, len(text) - 1):
        if text[i - 1] == " " and text[i - 2] in ".?!" or text[i - 1] == "\n" and text[i] != "\n":
            starts.append(i)
    return starts


def _sentence_span(text: str, rng: random.Random, words: int) -> tuple[int, int]:
    """A run of whole sentences of about `words` words: (start, end), end after the final punctuation."""
    starts = _sentence_starts(text)
    start = rng.choice(starts[: max(1, len(starts) * 2 // 3)])
    end = start
    for s in starts:
        if s > start and len(text[start:s].split()) >= words:
            end = s
            break
    else:
        end = len(text)
    return start, len(text[:end].rstrip())


WORD_POOL = NOUNS + _CLASSES["V"] + ADJECTIVES + _CLASSES["B"]


def obfuscate(passage: str, rng: random.Random, rate: float = 0.4) -> str:
    """PAN-13's random obfuscation: of the words, a `rate` share is replaced, dropped, doubled by an
    inserted word, or swapped with its neighbour (the same number of each on average). At 0.4, as on
    PAN-13's own random-obfuscation pairs, verbatim runs alone find only about half of the cases."""
    words = passage.split()
    out: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if rng.random() >= rate:
            out.append(word)
        else:
            op = rng.randrange(4)
            if op == 0:
                out.append(rng.choice(WORD_POOL))
            elif op == 1:
                pass
            elif op == 2:
                out += [word, rng.choice(WORD_POOL)]
            elif i + 1 < len(words):
                out += [words[i + 1], word]
                i += 1
            else:
                out.append(word)
        i += 1
    return " ".join(out)


def plant(host: str, passages: list[str], rng: random.Random) -> tuple[str, list[tuple[int, int]]]:
    """Insert each passage as a paragraph of its own at a paragraph break of `host` (in order, spread
    out); returns the new text and the (start, end) of each passage in it."""
    breaks = [i for i in range(len(host)) if host.startswith("\n\n", i)] or [len(host)]
    chosen = sorted(rng.sample(breaks, len(passages)) if len(breaks) >= len(passages)
                    else [breaks[-1]] * len(passages))
    out, spans, last = [], [], 0
    length = 0
    for at, passage in zip(chosen, passages):
        out.append(host[last:at] + "\n\n")
        length += at - last + 2
        spans.append((length, length + len(passage)))
        out.append(passage)
        length += len(passage)
        last = at
    out.append(host[last:])
    return "".join(out), spans


@functools.lru_cache(maxsize=64)
def text_alignment_pairs(count: int, obfuscation: str = "none", seed: int = 0, cases: tuple[int, int] = (1, 3),
                         words: tuple[int, int] = (1_100, 2_000), passage: tuple[int, int] = (40, 220),
                         rate: float = 0.4) -> tuple[Pair, ...]:
    """`count` PAN-style pairs: a source and a suspicious document on the same topic; for "none" and
    "random", 1-3 passages of the source (whole sentences, 40-220 words) planted in the suspicious one
    as paragraphs of their own, verbatim or reworded (`obfuscate` at `rate`); for "unrelated", nothing
    planted. Cases are in the order of the suspicious document."""
    out = []
    for i in range(count):
        rng = random.Random(f"pair {obfuscation} {seed} {i}")
        topic = rng.randrange(1_000)
        key = 1_000_003 * (seed + 1) + 7 * i + {"none": 0, "random": 1, "unrelated": 2}[obfuscation]
        src = prose(key * 2, rng.randint(*words), topic)
        host = prose(key * 2 + 1, rng.randint(*words), topic)
        spans, lifted = [], []
        if obfuscation != "unrelated":
            for _ in range(rng.randint(*cases)):
                start, end = _sentence_span(src, rng, rng.randint(*passage))
                if any(start < e and s < end for s, e in spans):
                    continue
                spans.append((start, end))
                text = src[start:end]
                lifted.append(obfuscate(text, rng, rate) if obfuscation == "random" else text)
        susp, placed = plant(host, lifted, rng)
        found = tuple(Case(t0, t1 - t0, s0, s1 - s0) for (t0, t1), (s0, s1) in zip(placed, spans))
        out.append(Pair(f"suspicious-document{seed:02d}{i:03d}.txt", f"source-document{seed:02d}{i:03d}.txt",
                        susp, src, found, obfuscation))
    return tuple(out)


# --------------------------------------------------------------------------
# trees on disk


@functools.lru_cache(maxsize=4)
def _tree_documents(count: int, seed: int) -> tuple[tuple[str, bytes], ...]:
    docs = documents(count, seed, 1_000, 18_000)
    return tuple((f"document{i:04d}.txt", text.encode("utf-8")) for i, text in enumerate(docs))


def tree_document(i: int, count: int = 540, seed: int = 13) -> str:
    """The text of document `i` of `build_corpus_tree` (before a variant's added line)."""
    return _tree_documents(count, seed)[i][1].decode("utf-8")


def build_corpus_tree(root: Path, copies: int, count: int = 540, seed: int = 13) -> int:
    """`copies` folders part0.. each holding a variant of the same `count` documents (each variant a new
    document: a line is added), about 5.3 MB a copy (as long to scan as the 540 PAN-13 documents the
    tests used before); returns the number of files."""
    n = 0
    for k in range(copies):
        sub = root / f"part{k}"
        sub.mkdir(parents=True)
        for name, data in _tree_documents(count, seed):
            (sub / name).write_bytes(data + f"\nvariant {k}\n".encode())
            n += 1
    return n


def html_page(title: str, text: str, *, links: int = 12, seed: int = 0) -> str:
    """A web page around `text`: head with style and scripts, navigation, a sidebar of links, a
    comment form and a footer, the article's paragraphs in <p> elements."""
    rng = random.Random(f"page {seed}")
    nav = "".join(f'<li><a href="/{w}">{w.title()}</a></li>' for w in rng.sample(NOUNS, 6))
    side = "".join(f'<li><a href="/story/{rng.randint(1000, 9999)}">{" ".join(rng.sample(NOUNS, 3)).title()}'
                   "</a></li>" for _ in range(links))
    body = "".join(f"<p>{p.strip()}</p>\n" for p in text.split("\n") if p.strip())
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + title + "</title>"
            "<style>body{font-family:serif} .ad{display:none}</style>"
            "<script>window.dataLayer = window.dataLayer || []; function track(e){dataLayer.push(e);}</script>"
            "</head><body><header><div class=\"logo\">The Daily " + title.split()[0] + "</div>"
            "<nav><ul>" + nav + "</ul></nav></header>"
            "<main><article><h1>" + title + "</h1>\n" + body + "</article>"
            "<aside><h2>Related</h2><ul>" + side + "</ul></aside></main>"
            "<form action=\"/comment\"><textarea name=\"c\"></textarea><button>Post</button></form>"
            "<footer><p>Contact us</p><p>Terms of use</p></footer>"
            "<script>track({page: 'article'});</script></body></html>\n")


# --------------------------------------------------------------------------
# text as real corpora hold it: typography, accents, odd characters, other scripts

_TYPOGRAPHY = (("'", "\u2019"), ('"', "\u201c"), (" - ", " \u2014 "), ("...", "\u2026"), ("fi", "\ufb01"))
_ACCENTED = "café naïve façade déjà rôle Zürich Straße señor Ærø smørrebrød Łódź İstanbul ½ № ™ µ".split()
_SCRIPTS = ("Москва и Петербург — два города.", "東京は日本の首都です。", "서울은 한국의 수도입니다.",
            "Αθήνα είναι η πρωτεύουσα.", "ক্ষুধার্ত বিড়াল", "مرحبا بالعالم", "𠀀𠀁 astral 𝔘𝔫𝔦𝔠𝔬𝔡𝔢")


def mixed_texts(count: int = 160, seed: int = 0) -> list[str]:
    """`count` documents as a real collection holds them (see `_mixed_texts`), and four tiny ones."""
    return list(_mixed_texts(count, seed))


@functools.lru_cache(maxsize=4)
def _mixed_texts(count: int, seed: int) -> tuple[str, ...]:
    """Documents as a real collection holds them: most plain English-like prose, many with typographic
    quotes and dashes, ligatures, accented names, a control character where an apostrophe should be (as
    in PAN-13's texts), CRLF line ends, soft hyphens and no-break spaces, a line of another script, or
    HTML entities left in; sizes from a few characters to about 30,000."""
    rng = random.Random(f"mixed {seed}")
    out = []
    for i, text in enumerate(documents(count, seed=seed + 1000, low=40, high=30_000)):
        words = text.split(" ")
        for _ in range(rng.randint(0, 3)):
            kind = rng.randrange(8)
            at = rng.randrange(len(words))
            if kind == 0:
                words[at] = rng.choice(_ACCENTED)
            elif kind == 1:
                words[at] = words[at] + "\x19s"
            elif kind == 2:
                words[at] = "\u00ad".join((words[at][:2], words[at][2:])) if len(words[at]) > 3 else words[at]
            elif kind == 3:
                words[at] = words[at] + "\u00a0" + rng.choice(("km", "kg", "%"))
            elif kind == 4:
                words[at] = "\n" + rng.choice(_SCRIPTS) + "\n" + words[at]
            elif kind == 5:
                words[at] = "&amp; " + words[at] + " &#8212;"
            elif kind == 6:
                words[at] = f"({rng.randint(1, 99)}.{rng.randint(0, 9)})"
            else:
                words[at] = words[at].upper()
        text = " ".join(words)
        if i % 3 == 0:
            for plain, fancy in _TYPOGRAPHY:
                text = text.replace(plain, fancy)
            text = text.replace(" the ", " \u201cthe\u201d ", 2).replace(". ", ".\u00a0", 3)
        if i % 7 == 0:
            text = text.replace("\n", "\r\n")
        out.append(text)
    return (*out, "", "I.", "A rose is a rose.", "don\x19t \u00bd")


# --------------------------------------------------------------------------
# web pages with a known article body


@dataclass(frozen=True)
class Page:
    """A generated web page: its bytes, the article body (the gold text, paragraphs and list items,
    without the headline, as the Scrapinghub benchmark's articleBody) and the article as a bare HTML
    fragment (what Readability's expected.html holds)."""

    data: bytes
    gold: str
    expected_html: str


_INLINE = ("<a href=\"/w/{w}\">{w}</a>", "<em>{w}</em>", "<strong>{w}</strong>", "<span class=\"x\">{w}</span>",
           "<b>{w}</b>", "<i>{w}</i>", "<abbr title=\"t\">{w}</abbr>", "<code>{w}</code>")
_ENTITIES = (("&", "&amp;"), ("\u2014", "&mdash;"), ("\u00a0", "&nbsp;"), ("\u2019", "&#8217;"), ("\u00e9", "&eacute;"))
_SCRIPTS_JS = (
    "var _gaq = _gaq || []; _gaq.push(['_trackPageview']); (function() { var ga = document.createElement('script');"
    " ga.src = 'https://example.invalid/ga.js'; })();",
    "window.addEventListener('load', function(){ document.querySelectorAll('div.ad').forEach(function(e){"
    " e.innerHTML = '<div class=\"x\">Sponsored content</div>'; }); });",
    "if (a < b && b > c) { console.log('</p> is not a tag here'); } function init(x) { return x * 2; }",
    "<!-- document.write('<p>Written by a script</p>'); function legacy() {} // -->",
)


def _html_text(words: list[str], rng: random.Random) -> str:
    """A sentence's words as HTML: some wrapped in inline elements, some characters as entities."""
    out = []
    for word in words:
        escaped = word.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        if rng.random() < 0.05:
            escaped = rng.choice(_INLINE).format(w=escaped)
        out.append(escaped)
    text = " ".join(out)
    if rng.random() < 0.3:
        text = text.replace(" ", " &nbsp;", 1)
    return text


def news_page(seed: int) -> Page:
    """One page in one of several site styles: semantic (header, nav, aside, footer) or a div soup whose
    menus and link lists stay in the text; scripts (inline code, JSON-LD, trackers, comments), styles,
    noscript, SVG icons, forms, cookie banners; the article with inline markup, entities, lists, a
    quote, a figure caption, sometimes unclosed <p> tags or upper-case tags, sometimes in Windows-1252
    with a <meta charset>."""
    rng = random.Random(f"news page {seed}")
    body = prose(50_000 + seed, rng.randint(250, 1_200))
    paragraphs = [p for p in body.split("\n") if p.strip()]
    if rng.random() < 0.3:  # accented names and typography, to exercise encodings and entities
        paragraphs = [p.replace(" the ", " the caf\u00e9 ", 1).replace(", ", " \u2014 ", 1) for p in paragraphs]
    title = " ".join(w.capitalize() for w in prose(60_000 + seed, 8).split()[:7]).rstrip(".?!")
    soup, upper, unclosed = rng.random() < 0.5, rng.random() < 0.15, rng.random() < 0.2
    legacy = rng.random() < 0.2
    gold: list[str] = []
    article: list[str] = []
    for i, paragraph in enumerate(paragraphs):
        roll = rng.random()
        if roll < 0.1 and i:
            items = [s.strip() for s in paragraph.replace("?", ".").replace("!", ".").split(".") if s.strip()]
            article.append("<ul>" + "".join(f"<li>{_html_text(item.split(), rng)}</li>" for item in items) + "</ul>")
            gold += items
        elif roll < 0.15:
            article.append(f"<blockquote><p>{_html_text(paragraph.split(), rng)}</p></blockquote>")
            gold.append(paragraph)
        elif roll < 0.2:
            article.append(f"<h2>{_html_text(paragraph.split()[:6], rng)}</h2>")
            gold.append(" ".join(paragraph.split()[:6]))
        else:
            close = "" if unclosed else "</p>"
            article.append(f"<p>{_html_text(paragraph.split(), rng)}{close}")
            gold.append(paragraph)
        if rng.random() < 0.08:
            caption = " ".join(prose(70_000 + seed * 31 + i, 12).split()[:10])
            article.append(f'<figure><img src="/img/{i}.jpg" alt="photo"><figcaption>{caption}</figcaption></figure>')
            gold.append(caption)
    menu = [w.capitalize() for w in rng.sample(NOUNS, 8)]
    related = [" ".join(rng.sample(NOUNS, 4)).capitalize() for _ in range(rng.randint(4, 15))]
    scripts = "".join(f"<script>{rng.choice(_SCRIPTS_JS)}</script>" for _ in range(rng.randint(1, 4)))
    json_ld = ('<script type="application/ld+json">{"@context": "https://schema.org", "@type": "NewsArticle", '
               f'"headline": "{title}", "author": {{"name": "{_name(rng)}"}}}}</script>')
    head = (f'<head><meta charset="{"windows-1252" if legacy else "utf-8"}"><title>{title} | The Daily</title>'
            "<style>.ad{display:none} p > a:hover{color:red} /* </p> */</style>" + json_ld + scripts + "</head>")
    icon = '<svg width="10" height="10"><title>icon menu</title><path d="M0 0h10v10z"/></svg>'
    if soup:
        top = ('<div id="top"><div class="logo">The Daily</div><div class="menu">'
               + "".join(f'<a href="/{m.lower()}">{m}</a> ' for m in menu) + "</div></div>")
        side = ('<div class="sidebar"><div>Trending now</div>'
                + "".join(f"<div><a href='#'>{r}</a></div>" for r in related) + "</div>")
        bottom = "<div class='footer'>© The Daily. Privacy policy.</div>"
    else:
        top = ("<header><div class='logo'>The Daily</div><nav><ul>" + "".join(f"<li><a href='/{m.lower()}'>{m}</a></li>"
               for m in menu) + f"</ul>{icon}</nav></header>")
        side = ("<aside><h3>Trending now</h3><ol>"
                + "".join(f"<li><a href='#'>{r}</a></li>" for r in related) + "</ol></aside>")
        bottom = "<footer><p>© The Daily.</p><p>Privacy policy</p></footer>"
    banner = ("<div id='cookies'><p>We use cookies.</p><button>OK, got it</button><button>Settings</button></div>"
              if rng.random() < 0.5 else "")
    form = ("<form action='/search'><select name='s'><option>Everything</option><option>Sport</option></select>"
            "<input type='text' name='q'><button type='submit'>Search</button></form>")
    noscript = "<noscript><p>Please enable JavaScript to read the comments.</p></noscript>"
    byline = f"<p class='byline'>By {_name(rng)} {_name(rng)}</p>" if rng.random() < 0.5 else ""
    markup = ("<!DOCTYPE html>\n<html lang='en'>" + head + "<body>" + banner + top + form + "<main><article>"
              + f"<h1>{title}</h1>" + byline + "\n".join(article) + "</article>" + side + "</main>"
              + noscript + "<!-- comments: <p>Commented out</p> -->" + bottom
              + f"<script>{_SCRIPTS_JS[0]}</script></body></html>\n")
    if upper:
        for tag in ("p", "li", "ul", "div", "script", "style", "h2"):
            markup = markup.replace(f"<{tag}>", f"<{tag.upper()}>").replace(f"</{tag}>", f"</{tag.upper()}>")
    data = markup.encode("cp1252", "xmlcharrefreplace") if legacy else markup.encode("utf-8")
    expected = "<div id='readability-page-1' class='page'>" + "\n".join(article) + "</div>"
    return Page(data, "\n".join(gold), expected)


# --------------------------------------------------------------------------
# made-up words with Zipf-like frequencies


def zipf_writer(seed: int) -> Callable[[int], str]:
    """`text(n_chars)`: sentences of 8-20 words from 6,000 made-up words (2-9 letters) drawn with weights
    1/rank, at least `n_chars` characters; successive calls continue one seeded stream."""
    rng = random.Random(seed)
    vocab = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9))) for _ in range(6000)]
    weights = [1 / (i + 1) for i in range(len(vocab))]  # Zipf-like, as words are

    def text(n_chars: int) -> str:
        out, size = [], 0
        while size < n_chars:
            sentence = " ".join(rng.choices(vocab, weights, k=rng.randint(8, 20))).capitalize() + "."
            out.append(sentence)
            size += len(sentence) + 1
        return " ".join(out)

    return text


# a news item (written for the tests) and a version of it: the middle three sentences lightly reworded (words
# in common: reworded seeds), the first and last ones said in other words
HARBOUR = ["The harbour authority closed the northern pier after engineers found deep cracks in its concrete supports.",
           "Repairs to the pier are expected to take at least eighteen months and will cost the city nearly four "
           "million pounds.",
           "Fishing boats that used the northern berths have been moved to the southern quay for the duration of the "
           "works.",
           "Local traders say the closure has already cut the number of visitors to the market stalls along the "
           "waterfront.",
           "The council has promised a public meeting next month to explain how the repairs will be paid for."]
HARBOUR_RETOLD = ["Following an inspection that revealed serious structural damage, port officials shut down the "
                  "northern jetty.",
                  "Repairs to the pier should take at least eighteen months and cost the city almost four million "
                  "pounds.",
                  "Fishing boats using the northern berths were moved to the southern quay while the works continue.",
                  "Traders say the closure has already reduced the number of visitors to market stalls on the "
                  "waterfront.",
                  "Residents will be invited to a gathering in the coming weeks where councillors will set out the "
                  "funding plan."]
