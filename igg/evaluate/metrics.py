"""Text2KGBench's metrics, computed the benchmark's way (``evaluation/run_eval.py``, Apache-2.0), so that
``igg eval text2kg`` can print them for the raw answers and for what IGG accepted.

Per sentence: precision, recall and F1 of the triples whose relation is one of the gold triples' (each triple
lower-cased with spaces and underscores removed); ontology conformance (the share of triples whose relation is
an ontology relation, spaces as ``_``) and relation hallucination (1 - conformance); subject and object
hallucination (the share of triples whose stemmed subject or object is not a substring of the stemmed sentence
followed by the ontology's concept labels). Each metric is averaged over an ontology's test sentences, then
over the ontologies. A sentence without triples scores 0 precision, recall, F1 and hallucination, conformance
1.

The stemmer is NLTK's Porter stemmer; the tokenizer NLTK's Treebank word tokenizer
(``NLTKWordTokenizer().tokenize``): the benchmark calls ``word_tokenize``, which needs the punkt model (not
downloadable here) only to split sentences first, and runs this tokenizer on each. The scorer's own file stays
the oracle: the tests run it on IGG's output and compare.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from igg.errors import Problem, RequestInvalid

METRICS = ("precision", "recall", "f1", "onto_conf", "rel_halluc", "sub_halluc", "obj_halluc")
"""The benchmark's metrics, in its order."""
_SPACES = re.compile(r"(_|\s+)")

Triple = tuple[str, str, str]


def triple_key(triple: Sequence[str]) -> str:
    """A triple as the scorer compares it: lower case, spaces and underscores removed, concatenated."""
    return "".join(_SPACES.sub("", part).lower() for part in triple)


@dataclass
class Stemmer:
    """The scorer's stemmed, space-free text (NLTK's Porter stemmer over the Treebank tokenizer)."""

    stem: Callable[[str], str]
    tokenize: Callable[[str], list[str]]
    cache: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls) -> Stemmer:
        """The stemmer, or ``UsageError`` naming the missing package."""
        try:
            from nltk.stem import PorterStemmer  # type: ignore[import-untyped]
            from nltk.tokenize import NLTKWordTokenizer  # type: ignore[import-untyped]
        except ImportError:
            raise RequestInvalid(
                [Problem("", "the benchmark's metrics need NLTK: pip install 'igg[eval]' (nltk>=3.8)")],
                source="igg eval",
            ) from None
        return cls(PorterStemmer().stem, NLTKWordTokenizer().tokenize)

    def text(self, text: str) -> str:
        """``text`` stemmed word by word, joined, without spaces or underscores, lower case."""
        out = self.cache.get(text)
        if out is None:
            out = _SPACES.sub("", "".join(self.stem(w) for w in self.tokenize(text))).lower()
            self.cache[text] = out
        return out

    def entity(self, text: str) -> str:
        """A subject or object as the scorer cleans it (``01januari`` dropped, as it does)."""
        return self.text(text).replace("01januari", "")


def sentence_metrics(
    triples: Sequence[Triple],
    gold: Sequence[Triple],
    sentence: str,
    relations: set[str],
    concepts: str,
    stemmer: Stemmer,
) -> dict[str, float]:
    """The metrics of one sentence's triples (see the module doc)."""
    gold_rels = {t[1].replace(" ", "_") for t in gold}
    kept = {triple_key(t) for t in triples if t[1] in gold_rels}
    truth = {triple_key(t) for t in gold}
    out = dict.fromkeys(METRICS, 0.0)
    if kept:
        hit = len(truth & kept)
        p, r = hit / len(kept), hit / len(truth) if truth else 0.0
        out.update(precision=p, recall=r, f1=2 * p * r / (p + r) if p + r else 0.0)
    if not triples:
        out["onto_conf"] = 1.0
        return out
    conf = sum(1 for t in triples if t[1] in relations) / len(triples)
    out["onto_conf"], out["rel_halluc"] = conf, 1 - conf
    context = stemmer.text(sentence + concepts)
    out["sub_halluc"] = sum(1 for t in triples if stemmer.entity(t[0]) not in context) / len(triples)
    out["obj_halluc"] = sum(1 for t in triples if stemmer.entity(t[2]) not in context) / len(triples)
    return out


def average(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    """Each metric averaged over the rows (sentences, or ontologies)."""
    return {m: sum(r[m] for r in rows) / len(rows) if rows else 0.0 for m in METRICS}


def in_sentence(triple: Sequence[str], sentence: str, concepts: str, stemmer: Stemmer) -> bool:
    """Whether the scorer finds both the triple's subject and object in the sentence (with the concepts)."""
    context = stemmer.text(sentence + concepts)
    return stemmer.entity(triple[0]) in context and stemmer.entity(triple[2]) in context


__all__ = ["METRICS", "Stemmer", "Triple", "average", "in_sentence", "sentence_metrics", "triple_key"]
