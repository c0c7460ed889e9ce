"""Whether a value an action writes is stated in its context, read the way knowledge graphs write names
(``config.grounding: "values"``; see ``igg.act.evidence``).

**The rule.** A value (a node's identity, a literal property value; numbers as their text) is *found* when,
in this order, the first hit winning:

1. *exact*: the value's text occurs in the context as given, on word boundaries;
2. *normalized*: both sides folded the same way occur word for word (on word boundaries): Unicode
   compatibility forms with accents dropped (``ł``, ``ø``, ``ß`` spelt ``l``, ``o``, ``ss``), case folded,
   ``_`` and punctuation as spaces, an apostrophe a word of its own (``Baymax's`` holds ``Baymax``; ``Its`` is
   not ``It's``), plural ``s`` dropped, numbers without thousands separators or a zero fraction (``1,200`` =
   ``1200``, ``98.0`` = ``98``, ``875.4 million`` = ``875400000``), dates in one form (``1989-06-12`` =
   ``12 June 1989`` = ``June 12th, 1989`` = ``6/12/1989``, both readings of an ambiguous one; a ``YYYY-01-01``
   date also as its year), unit words as their symbols (``kilometres`` = ``km``), initials joined (``D.C.`` =
   ``DC``);
3. *name*: the same, once a knowledge graph's parenthesised disambiguator is dropped
   (``Arion (comicsCharacter)`` -> ``Arion``, ``Ray_Griggs_(director)`` -> ``Ray Griggs``), when the
   disambiguator is stated too, in the context or as the ontology's own class or relation, as a phrase or word
   by word (``comicsCharacter`` read as "comics character"): ``Ariane 5 (rocket)`` is not found where nothing
   says rocket, for the qualifier is a claim like any other;
4. *name*, a knowledge graph's other spellings: a leading ``The`` the text leaves out, a stated name followed
   by a class of the ontology, or by a relation's word after a proper name (``English language``), a name
   ending in a class's last word stated with the class's whole label (``James Bay Basin`` in "James Bay
   drainage basin"), initials stated as an abbreviation (``United States`` as ``U.S.``, or ``USA`` with the A
   of "America"; not ``USD``), a two-word name whose middle names the text adds (``Luke Shaw`` in "Luke Paul
   Hoare Shaw", ``Heurelho Gomes`` in "Heurelho da Silva Gomes": at most ``MIDDLE_NAMES`` capitalised words or
   lower-case name particles between);
5. *fuzzy* (bounded): the words of the folded value in the folded context in order, with at most
   ``GAP_WORDS`` initial between two of them (``Alan Shepard`` in ``Alan B. Shepard``) and the value's own
   middle initials optional (``Abraham A. Ribicoff`` in ``Abraham Ribicoff``), for values of two words or
   more; or the value's last word stated with a demonym's or agent noun's ending (``DERIVED_ENDINGS``), the
   words before it stated just before (``South Africa`` in "White South Africans", ``Guitar`` in "guitarist").
   A value's words written as one word (``racewalker`` for "race walker") or the other way round count too.
   Nothing is matched by character similarity alone: a misspelt name is not the text's.
6. *demonym*: a country or nation whose demonym is irregular, stated by it (``United States`` in
   "American-born", ``Netherlands`` in "Dutch"): the ``DEMONYMS`` table, from Wikipedia's "List of adjectival
   and demonymic forms for countries and nations" (the regular ones, ``Japan`` -> "Japanese", are the fuzzy
   rule's endings).
7. *referent*: a name for an entity the context refers to without naming it, as an encyclopedia's sentence
   refers to its article's subject. For a new node's identity: "the", "this" or "that" and the last word of
   the node's type or a common noun for it (``REFERRING_NOUNS``: ``the film`` or ``the movie`` for a
   ``film``), opening a sentence or a clause (``The film stars ...``, ``..., the film stars ...``: what the
   sentence is about) and not followed by a name ("the film It's Great to Be Young" names it), when the text
   states no word of the name (else it is another name, or a misspelt one). One context refers to one entity
   of a type so: the first name given claims the reference (and is found again, as an edge's evidence);
   another name for it is not found.

A value holding list brackets, markup, a line break or an unclosed parenthesis is found only exactly (it is
not how a name is written: ``[Cecil Parker]``, ``Gary Cohn (comic book writer``), and so is a value with a
comma the normalized rule does not find (``Fulton County, Georgia`` for "Fulton County ... in Georgia").

The ontology's own classes (type names and labels) count as found (*term*): naming a class is not a
hallucination.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from typing import Any

from rapidfuzz import fuzz

MIDDLE_NAMES = 3
"""Capitalised words a person's short name may leave out of the name the text gives (``Luke Shaw``)."""
_PARTICLES = "da|de|del|della|der|di|do|dos|das|du|la|le|van|von|bin|ibn|al|el|y"
"""Lower-case particles a full name may hold between its capitalised words (``Heurelho da Silva Gomes``)."""
REFERRING = ("the", "this", "that")
REFERRING_NOUNS: dict[str, tuple[str, ...]] = {
    "film": ("movie", "short", "picture"),
    "work": ("song", "track", "piece", "single", "album", "book", "novel"),
    "single": ("song", "track"),
    "album": ("record",),
    "book": ("novel",),
    "software": ("program", "game"),
    "application": ("program", "app"),
    "watercourse": ("river", "stream"),
    "program": ("show", "series"),
}
"""The common nouns by which a text refers back to an entity of a type, besides the type's own last word (a
``film`` is "the movie"; a ``musical work``, "the song"): the referent rule."""
_FUNCTION_WORDS = frozenset({"the", "and", "for", "with", "from", "into", "who", "what", "its", "his", "her"})
"""Words that refer back to an entity by its class word (``the film``, ``this album``): the referent rule."""
GAP_WORDS = 1
"""Other words allowed between two words of a value (the fuzzy rule)."""

DERIVED_ENDINGS = frozenset({"n", "an", "ian", "ese", "ish", "i", "ist"})
"""Endings a stated word may add to a value's last word (after the plural ``s`` is dropped): demonyms and
agent nouns (``Africa`` -> ``Africans``, ``Japan`` -> ``Japanese``, ``guitar`` -> ``guitarist``)."""

DEMONYMS: dict[str, tuple[str, ...]] = {
    "united states": ("american", "americans"),
    "united states of america": ("american", "americans"),
    "united kingdom": ("british", "briton", "britons"),
    "great britain": ("british",),
    "scotland": ("scottish", "scots", "scot"),
    "wales": ("welsh",),
    "ireland": ("irish",),
    "northern ireland": ("northern irish",),
    "netherlands": ("dutch",),
    "france": ("french", "frenchman", "frenchwoman"),
    "switzerland": ("swiss",),
    "denmark": ("danish", "dane", "danes"),
    "sweden": ("swedish", "swede", "swedes"),
    "finland": ("finnish", "finn", "finns"),
    "poland": ("polish", "pole", "poles"),
    "spain": ("spanish", "spaniard", "spaniards"),
    "greece": ("greek", "greeks"),
    "turkey": ("turkish", "turk", "turks"),
    "philippines": ("filipino", "filipina", "philippine"),
    "thailand": ("thai",),
    "iceland": ("icelandic", "icelander"),
    "norway": ("norwegian",),
    "new zealand": ("new zealander", "kiwi"),
    "czech republic": ("czech",),
    "czechia": ("czech",),
    "slovakia": ("slovak",),
    "croatia": ("croatian", "croat"),
    "serbia": ("serbian", "serb"),
    "bosnia and herzegovina": ("bosnian",),
    "portugal": ("portuguese",),
    "china": ("chinese",),
    "peru": ("peruvian",),
    "germany": ("german",),
    "mexico": ("mexican",),
    "lebanon": ("lebanese",),
    "pakistan": ("pakistani",),
    "bangladesh": ("bangladeshi",),
    "iraq": ("iraqi",),
    "israel": ("israeli",),
    "madagascar": ("malagasy",),
    "monaco": ("monegasque",),
    "cyprus": ("cypriot",),
}
"""Countries and nations (folded) whose demonyms (folded) the fuzzy rule's endings do not reach, from
Wikipedia's "List of adjectival and demonymic forms for countries and nations" (CC BY-SA): a country is stated
by its demonym ("American-born" states ``United States``). A demonym names the nation, not a place in it: only
a country's own name is found this way."""

_LETTERS = str.maketrans(
    {
        "ł": "l",
        "Ł": "L",
        "ø": "o",
        "Ø": "O",
        "đ": "d",
        "Đ": "D",
        "ß": "ss",
        "æ": "ae",
        "Æ": "Ae",
        "œ": "oe",
        "Œ": "Oe",
        "þ": "th",
        "Þ": "Th",
        "ı": "i",
        "ð": "d",
        "Ð": "D",
    }
)
"""Latin letters Unicode gives no accent-free decomposition, spelt as ASCII does."""
_MONTHS = {
    m: i
    for i, m in enumerate(
        (
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ),
        1,
    )
}
_MONTHS.update({m[:3]: i for m, i in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?[.,]?"
_DATES = [  # (pattern, order of year, month, day groups)
    (re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b"), (1, 2, 3)),
    (re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+(\d{{4}})\b"), (3, 2, 1)),
    (re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+(\d{{4}})\b"), (3, 1, 2)),
    (re.compile(rf"\b{_MONTH}\s+{_DAY}\s*(\d{{4}})\b"), (3, 1, 2)),
    (re.compile(rf"\b{_MONTH},?\s+(\d{{4}})\b"), (2, 1, 0)),
    (re.compile(r"\b(\d{4})-(\d{1,2})\b(?!-)"), (1, 2, 0)),
]
_NUMERIC_DATE = re.compile(r"\b(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})\b")
_SCALE = re.compile(r"\b(\d+(?:\.\d+)?)\s*(thousand|million|billion|trillion)\b")
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_THOUSANDS = re.compile(r"\b(\d{1,3})((?:[,\u00a0 ]\d{3})+)(?!\d)")
_ZERO_FRACTION = re.compile(r"\b(\d+)\.0+\b")
_DIGIT_LETTER = re.compile(r"(?<=\d)(?=[a-z])|(?<=[a-z])(?=\d)")
_APOSTROPHES = re.compile("['\u2019`\u00b4]")
_NON_WORD = re.compile(r"[^0-9a-z.']+|(?<!\d)\.|\.(?!\d)")
_ABBREVIATION = re.compile(r"\b(?:[A-Z]\.){2,}|\b[A-Z]{2,6}\b")
_STRUCTURAL = re.compile(r"[\[\]{}<>|\n\r\t]")
_QUALIFIER = re.compile(r"\(([^()]*)\)")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_PARENS = re.compile(r"\s*\([^()]*\)")
_UNITS = {
    "kilometre": "km",
    "kilometer": "km",
    "kilometres": "km",
    "kilometers": "km",
    "metre": "m",
    "meter": "m",
    "metres": "m",
    "meters": "m",
    "centimetre": "cm",
    "centimetres": "cm",
    "centimeter": "cm",
    "centimeters": "cm",
    "millimetre": "mm",
    "millimetres": "mm",
    "feet": "ft",
    "foot": "ft",
    "inch": "in",
    "inches": "in",
    "mile": "mi",
    "miles": "mi",
    "kilogram": "kg",
    "kilograms": "kg",
    "kilogramme": "kg",
    "gram": "g",
    "grams": "g",
    "pound": "lb",
    "pounds": "lb",
    "lbs": "lb",
    "tonne": "t",
    "tonnes": "t",
    "minute": "min",
    "minutes": "min",
    "mins": "min",
    "second": "s",
    "seconds": "s",
    "hour": "h",
    "hours": "h",
    "hrs": "h",
    "percent": "%",
    "per cent": "%",
    "square": "sq",
    "dollars": "$",
    "dollar": "$",
    "usd": "$",
    "euros": "eur",
    "euro": "eur",
    "kilowatt": "kw",
    "kilowatts": "kw",
    "horsepower": "hp",
    "litre": "l",
    "litres": "l",
    "liter": "l",
    "liters": "l",
    "km2": "sq km",
    "km²": "sq km",
    "m2": "sq m",
    "m²": "sq m",
}


def _date(m: re.Match[str], order: tuple[int, int, int]) -> str:
    y, mo, d = (m.group(i) if i else "" for i in order)
    month = _MONTHS.get(mo.lower().rstrip("."), 0) if not mo.isdigit() else int(mo)
    if not 1 <= month <= 12:
        return m.group(0)
    if not d:
        return f" {y} {month:02d} "
    day = int(d)
    if not 1 <= day <= 31:
        return m.group(0)
    return f" {y} {month:02d} {day:02d} "


def _numeric_date(m: re.Match[str]) -> str:
    """``9/27/2003``, ``27.09.2003``, ``06-09-2006``: day and month told apart when one is over 12; both
    readings when neither is."""
    a, b, y = int(m.group(1)), int(m.group(2)), m.group(3)
    readings = [(mo, d) for mo, d in ((a, b), (b, a)) if 1 <= mo <= 12 and 1 <= d <= 31]
    if not readings:
        return m.group(0)
    return " ".join(f" {y} {mo:02d} {d:02d} " for mo, d in dict.fromkeys(readings))


def _scaled(m: re.Match[str]) -> str:
    number = float(m.group(1)) * _SCALES[m.group(2)]
    return str(int(number)) if number.is_integer() else str(number)


def fold(text: str) -> str:
    """A text folded as the rule compares it: words separated by one space, with a space at either end."""
    text = unicodedata.normalize("NFKD", text.translate(_LETTERS))
    text = "".join(c for c in text if not unicodedata.combining(c)).casefold()
    text = _APOSTROPHES.sub(" ' ", text).replace("_", " ").replace("&", " and ")
    text = _NUMERIC_DATE.sub(_numeric_date, text)
    for pattern, order in _DATES:
        text = pattern.sub(lambda m, o=order: _date(m, o), text)  # type: ignore[misc]
    text = _THOUSANDS.sub(lambda m: m.group(1) + re.sub(r"\D", "", m.group(2)), text)
    text = _SCALE.sub(_scaled, text)
    text = _ZERO_FRACTION.sub(r"\1", text)
    text = _DIGIT_LETTER.sub(" ", text)
    words: list[str] = []
    for word in _NON_WORD.sub(" ", text).split():
        word = _UNITS.get(word, word)
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss") and word.isalpha():
            word = word[:-2] if word.endswith(("ches", "shes", "sses", "xes", "zes")) else word[:-1]
        words.append(word)
    return " " + " ".join(_initials(words)) + " "


def _initials(words: list[str]) -> list[str]:
    """Runs of two or more one-letter words joined: ``D.C.`` and ``U. S.`` read as ``dc`` and ``us``."""
    out: list[str] = []
    run: list[str] = []
    for word in [*words, ""]:
        if len(word) == 1 and word.isalpha():
            run.append(word)
            continue
        out += ["".join(run)] if len(run) > 1 else run
        run = []
        if word:
            out.append(word)
    return out


def _bounded(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` starts and ends on word boundaries."""
    return (start == 0 or not (text[start - 1].isalnum() and text[start].isalnum())) and (
        end == len(text) or not (text[end - 1].isalnum() and text[end].isalnum())
    )


def bare_name(value: str) -> str:
    """A name without a knowledge graph's parenthesised disambiguators: ``Arion_(comicsCharacter)`` ->
    ``Arion``."""
    return _PARENS.sub("", value).strip(" _")


_DEMONYM_KEYS = {fold(k): k for k in DEMONYMS}


class ValueFinder:
    """One context, folded once, and the ontology's terms: ``find`` says how a value is found, or None."""

    def __init__(self, context: str, terms: Iterable[str] = (), kinds: Iterable[str] = ()) -> None:
        """``terms``: the ontology's classes (names and labels), stated by definition; ``kinds``: more words
        that may follow a stated name as its class word (the relations' labels: ``English language``)."""
        self.context = context
        self.folded = fold(context)
        self.words = self.folded.split()
        self.terms = {fold(t) for t in terms if t}
        self.kinds = self.terms | {fold(t) for t in kinds if t}
        self._abbreviations: set[str] | None = None
        self._referents: dict[str, str] = {}

    def find(self, value: Any, kind: str | None = None) -> str | None:
        """How the value is found (``exact``, ``normalized``, ``term``, ``name``, ``qualified``, ``classed``,
        ``abbreviation``, ``demonym``, ``fuzzy``, ``referent``), or None. ``kind``: the type of the node the
        value names (a new node's identity), for the referent rule."""
        how = self._find(value)
        if how is None and isinstance(value, str):
            how = self._referent(value, kind)
        return how

    def _referent(self, text: str, kind: str | None) -> str | None:
        """A name for the entity the context refers to only by its class word (``the film``): see the module
        doc. The first name given claims the reference; it is found again (as an edge's evidence), another is
        not."""
        key = fold(text)
        if key in self._referents.values():
            return "referent"
        if kind is None or not text[:1].isupper() and not text[:1].isdigit():
            return None
        if _STRUCTURAL.search(text) or text.count("(") != text.count(")") or "," in text:
            return None
        if any(len(w) > 2 and f" {w} " in self.folded and w not in _FUNCTION_WORDS for w in key.split()):
            return (
                None  # the text states part of it: another name (or a misspelling), not an unnamed referent
            )
        word = fold(_CAMEL.sub(" ", kind)).split()[-1:]
        if not word or not word[0].isalpha() or len(word[0]) < 3 or word[0] in self._referents:
            return None
        nouns = "|".join((word[0], *REFERRING_NOUNS.get(word[0], ())))
        if not any(
            re.search(rf"(?:^|[.;:,]\s+)(?i:{d}\s+(?:{nouns})s?)\b(?![\w'’-]|\s+[A-Z\"“'])", self.context)
            for d in REFERRING
        ):
            return None  # "the film" (not "the film It's Great to Be Young", which names it)
        self._referents[word[0]] = key
        return "referent"

    def _find(self, value: Any) -> str | None:
        text = value if isinstance(value, str) else str(value)
        if not text.strip():
            return None
        at = self.context.find(text)
        if at >= 0 and _bounded(self.context, at, at + len(text)):
            return "exact"
        if _STRUCTURAL.search(text) or text.count("(") != text.count(")"):
            return (
                None  # list brackets, markup, line breaks, a parenthesis left open: not how a name is written
            )
        folded = fold(text)
        if folded.strip() and folded in self.folded:
            return "normalized"
        if folded in self.terms:
            return "term"
        if folded.endswith(" 01 01 ") and folded[:6] in self.folded:  # a year written as YYYY-01-01
            return "normalized"
        bare = bare_name(text)
        if bare and bare != text:
            if not self._qualifiers_stated(text):
                return None  # "Ariane 5 (rocket)" where nothing says rocket: the qualifier is a claim too
            folded = fold(bare)
            if folded.strip() and (folded in self.folded or folded in self.terms):
                return "name"
        named = self._named(bare or text)
        if named is not None:
            return named
        if self._full_name(bare or text):
            return "name"
        if self._demonym(fold(bare or text)):
            return "demonym"
        return "fuzzy" if self._near(folded) else None

    def _demonym(self, folded: str) -> bool:
        """A country stated by its irregular demonym (``DEMONYMS``), as a word of its own: not inside a longer
        proper name (neither "American Civil War" nor "African American" states ``United States``); a compound
        ("American-born") is the demonym's own."""
        for demonym in DEMONYMS.get(_DEMONYM_KEYS.get(folded, ""), ()):
            for m in re.finditer(rf"(?<![\w-]){re.escape(demonym)}(?![\w])", self.context, re.IGNORECASE):
                before = self.context[: m.start()].split()[-1:]
                after = re.match(r"(-[a-z]|\s+[A-Z])", self.context[m.end() :])
                if (not before or not before[0][:1].isupper() or before[0] in ("The", "A", "An")) and (
                    after is None or after.group(0).startswith("-")
                ):
                    return True
        return False

    def _full_name(self, text: str) -> bool:
        """A person's short name, stated as part of a longer proper name: the value's first and last words
        with at most ``MIDDLE_NAMES`` capitalised words between them in the text (``Luke Shaw`` in "Luke Paul
        Hoare Shaw", ``Yevgeni Cherkes`` in "Yevgeni Aleksandrovich Cherkes")."""
        words = text.split()
        if len(words) != 2 or not all(w[:1].isupper() and w.replace("-", "").isalpha() for w in words):
            return False
        first, last = (re.escape(w) for w in words)
        middle = rf"(?:\s+(?:[\"“]?[A-Z][\w.'-]*[\"”]?|{_PARTICLES})){{1,{MIDDLE_NAMES}}}"
        return re.search(rf"(?<!\w){first}[a-z]*{middle}\s+{last}(?!\w)", self.context) is not None

    def _qualifiers_stated(self, text: str) -> bool:
        """Whether each parenthesised qualifier of a name is stated in the context or is the ontology's own
        term (a class or relation), as a phrase or word by word, camelCase read as words
        (``comicsCharacter``)."""
        for qualifier in _QUALIFIER.findall(text):
            folded = fold(_CAMEL.sub(" ", qualifier))
            words = folded.split()
            if not words or not (
                folded in self.folded
                or folded in self.kinds
                or all(f" {w} " in self.folded or f" {w} " in self.kinds for w in words)
            ):
                return False
        return True

    def _named(self, text: str) -> str | None:
        """A knowledge graph's other ways of naming: ``English language`` (a stated name, then a class of the
        ontology: ``classed``), ``United States`` as ``U.S.`` or ``US`` (its initials, stated as an
        abbreviation: ``abbreviation``)."""
        if "," in text:  # "Tarrant County, Texas" is stated only as written (the normalized rule)
            return None
        words = fold(text).split()
        if words[:1] == ["the"] and len(words) > 1 and f" {' '.join(words[1:])} " in self.folded:
            return "name"  # "The Velvet Underground" stated as "Velvet Underground"
        if (
            len(words) > 1
            and f" {words[-1]} " in self.kinds
            and f" {' '.join(words[:-1])} " in self.folded
            and (f" {words[-1]} " in self.terms or self._proper(text.rsplit(None, 1)[0]))
        ):
            # "English language"; with a relation's word only after a proper name ("Bacon family" is not)
            return "classed"
        head = " ".join(words[:-1])
        if len(words) > 1 and any(
            t.split()[-1:] == words[-1:] and f" {head}{t}" in self.folded for t in self.terms
        ):
            return "classed"  # "James Bay Basin" stated as "James Bay drainage basin" (a class's whole label)
        initials = "".join(w[0] for w in text.split() if w[:1].isupper()).casefold()
        if (
            len(initials) >= 2
            and len(text.split()) >= 2
            and any(a == initials or a == initials + "a" for a in self.abbreviations)
        ):
            return "abbreviation"  # "United States" as "U.S." or "USA"
        return None

    def _proper(self, head: str) -> bool:
        """Whether the context states ``head`` capitalised, as a proper name."""
        return any(
            m.group(0)[:1].isupper()
            for m in re.finditer(rf"(?<!\w)(?i:{re.escape(head)})(?!\w)", self.context)
        )

    @property
    def abbreviations(self) -> set[str]:
        """The context's abbreviations (``U.S.``, ``USA``), folded to their letters."""
        if self._abbreviations is None:
            found = _ABBREVIATION.finditer(self.context)
            self._abbreviations = {re.sub(r"\W", "", m.group(0)).casefold() for m in found}
        return self._abbreviations

    def _near(self, folded: str) -> bool:
        words = folded.split()
        if len(words) > 2:  # a middle initial the text leaves out: "Abraham A. Ribicoff"
            words = [w for i, w in enumerate(words) if len(w) > 1 or i in (0, len(words) - 1)]
        if len(words) >= 2 and self._in_order(words):
            return True
        return self._derived(words) or self._joined(words)

    def _joined(self, words: list[str]) -> bool:
        """The value's words written as one (``racewalker`` for "race walker"), or one word of the value
        written as two in the text (``race walker`` for "racewalker"): the same letters, spaces aside."""
        if not words or len("".join(words)) < 6:
            return False
        if len(words) >= 2:
            return f" {''.join(words)} " in self.folded
        ctx = self.words
        return any(
            a + b == words[0] for a, b in zip(ctx, ctx[1:], strict=False) if len(a) >= 3 and len(b) >= 3
        )

    def _derived(self, words: list[str]) -> bool:
        """The value's last word stated with a demonym's or an agent noun's ending (``South Africa`` in "South
        Africans", ``Guitar`` in "guitarist"): the rest stated word for word just before it."""
        last = words[-1] if words else ""
        if len(last) < 4 or not last.isalpha():
            return False
        head = " ".join(words[:-1])
        for i, word in enumerate(self.words):
            if (
                word.startswith(last)
                and word[len(last) :] in DERIVED_ENDINGS
                and (not head or " ".join(self.words[max(0, i - len(words) + 1) : i]) == head)
            ):
                return True
        return False

    def _in_order(self, words: list[str]) -> bool:
        ctx = self.words
        for start, word in enumerate(ctx):
            if word != words[0]:
                continue
            at, ok = start, True
            for w in words[1:]:
                window = ctx[at + 1 : at + 2 + GAP_WORDS]
                if w not in window or any(len(x) > 1 or not x.isalpha() for x in window[: window.index(w)]):
                    ok = False  # only an initial may stand between: "Alan B. Shepard"
                    break
                at = at + 1 + window.index(w)
            if ok:
                return True
        return False

    def closest(self, value: Any) -> str:
        """The passage of the context most like the value, widened to whole words (for a verdict's
        message)."""
        text = value if isinstance(value, str) else str(value)
        hit = fuzz.partial_ratio_alignment(bare_name(text) or text, self.context)
        if hit is None or hit.score <= 0:
            return ""
        context = self.context
        start, end = hit.dest_start, hit.dest_end
        while start > 0 and context[start - 1].isalnum():
            start -= 1
        while end < len(context) and context[end].isalnum():
            end += 1
        passage = context[start:end].strip()
        return passage if len(passage) <= 120 else passage[:117] + "..."


__all__ = ["DEMONYMS", "DERIVED_ENDINGS", "MIDDLE_NAMES", "GAP_WORDS", "ValueFinder", "bare_name", "fold"]
