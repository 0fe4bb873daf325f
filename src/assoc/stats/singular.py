"""Plural -> singular for dictionary coding of listed words (Nicolas & Caliskan, 2024, preprocessing).

The paper turns plural responses into singulars before matching them with the SADCAT
dictionaries but does not name its tool. Listed characteristics are mostly adjectives, many
of which end in "s" (nervous, religious, generous, famous), next to nouns that are singular
although they end in "s" (glass, bus, analysis, series, news, politics) and irregular plurals
(people, women, children, men). So the rule here only changes a word that a dictionary of
English inflections knows as a plural noun:

1. The last word of a phrase is singularised ("hard workers" -> "hard worker").
2. It is looked up in LemmInflect's dictionary (Jascob, 2019; derived from the AGID and
   the SPECIALIST lexicon) with ``getAllLemmas``. A word that is its own lemma for some
   part of speech other than a noun form (an adjective, adverb, verb: "nervous", "famous",
   "religious") or its own noun lemma ("glass", "news", "politics") is kept; otherwise the
   first noun lemma replaces it ("women" -> "woman", "analyses" -> "analysis").
3. A word the dictionary does not know is singularised by LemmInflect's out-of-vocabulary
   noun rules only when it ends in "s" but not in "ss", "us" or "is" ("christians" ->
   "christian"; "xenophobous" stays).
4. ``people`` -> ``person``: LemmInflect treats "people" as a noun lemma (as in "a people"),
   but a listed "people" is the plural of "person" (SADCAT's own singulariser does the same).

5. Words that are not plurals although they end in "s" are kept (a list written by hand:
   fields in -ics such as "physics", pluralia tantum such as "trousers" and "glasses", place
   names such as "texas", adverbs such as "towards"); "-ies" plurals of "-ie" nouns become
   "-ie" ("newbies" -> "newbie"; a list written by hand, since LemmInflect gives "newby");
   "oxen" and "brethren" are irregular; among words LemmInflect does not know, "-men"
   compounds become "-man" ("congressmen"), "-ees" nouns lose the "s" ("divorcees") and "-us"
   nouns whose stem is an English word lose the "s" ("hindus"), by the word list of
   :func:`assoc.stats.sadcat.default_known_words`.

On 444 words labelled by hand (``tests/data/plurals_hand_labelled.tsv``: 346 plurals of
social-group words, -ies/-ie, -ves, -es, -men, Latin and Greek plurals, irregulars, and 98
words that are not plurals), the rule is right for 442 (0.995; "zulus" and "haikus" stay);
before the additions of step 5 it was right for 415.

Why LemmInflect rather than ``inflect``: measured on a word list built from the Warriner et
al. (2013) norms (21,522 words: the 13,915 Warriner entries, which must stay unchanged unless
an entry is itself the plural of another Warriner noun, as "children"; the plurals of the
Warriner nouns on which inflect's and LemmInflect's pluralisers agree, which must become the
noun; and the 14 hard cases above), this rule is right for 99.70% of the words (singular
words kept: 99.68% of 13,834; plurals singularised: 99.74% of 7,688; hard cases: 14 of 14;
that list calls "pants", "glasses" and "junkies" plurals of "pant", "glass" and "junky", which
step 5 deliberately does not follow).
``inflect.engine().singular_noun`` (applied where it returns a singular) is right for 98.20%
(singular words kept: 97.30%; plurals: 99.80%; hard cases: 7 of 14): it strips the "s" of
adjectives and singular nouns ("nervous" -> "nervou", "bus" -> "bu", "analysis" -> "analysi"),
the errors that matter most for listed characteristics. The rule's remaining errors are
mostly plural-only nouns ("bonkers" -> "bonker", "fireworks" -> "firework"). Re-measure with
``python benchmarks/bench_singular.py``; ``tests/test_stereotype_sadcat.py`` checks these numbers.

This is the singulariser of ``matching="exact"``; ``matching="sadcat"`` uses SADCAT's own
``singularize2`` (:func:`assoc.stats.sadcat.sadcat_singularize`).

References
----------
    Jascob, B. (2019). LemmInflect: a Python module for English lemmatization and inflection.
        https://github.com/bjascob/LemmInflect
    Warriner, A. B., Kuperman, V., & Brysbaert, M. (2013). Norms of valence, arousal, and
        dominance for 13,915 English lemmas. Behavior Research Methods, 45(4), 1191-1207.
        doi:10.3758/s13428-012-0314-x
    Nicolas, G., & Caliskan, A. (2024). Directionality and representativeness are differentiable
        components of stereotypes in large language models. PNAS Nexus, 3(11), pgae493.
        doi:10.1093/pnasnexus/pgae493
"""

from __future__ import annotations

import functools
import warnings
from typing import Any

#: Plurals whose singular LemmInflect does not give (it lists "people" as a noun lemma and does
#: not know "oxen" or "brethren").
IRREGULAR = {"people": "person", "oxen": "ox", "brethren": "brother"}
#: Words ending in "s" that are not plurals although LemmInflect (or the "-s" rule) would strip
#: it: fields of study in -ics, pluralia tantum, place names, adverbs. Listed by hand.
NOT_PLURAL = frozenset(
    """
    physics mathematics economics politics ethics athletics genetics linguistics electronics gymnastics
    robotics aerobics acoustics aesthetics logistics semantics phonetics optics forensics metaphysics
    obstetrics pediatrics geriatrics civics theatrics hysterics
    trousers pants jeans shorts scissors pajamas pyjamas clothes binoculars goggles glasses sunglasses
    tights leggings overalls headquarters outskirts belongings surroundings earnings savings riches thanks
    congratulations means news series species mumps measles diabetes rabies herpes
    texas kansas arkansas illinois paris athens christmas jesus olympics
    towards afterwards backwards forwards upwards downwards sideways always nowadays whereabouts sometimes
    """.split()
)
#: Nouns in "-ie" whose plural "-ies" LemmInflect turns into "-y" (or does not know). Listed by hand.
IE_NOUNS = frozenset(
    """
    newbie techie foodie hippie yuppie rookie cookie goalie groupie junkie zombie movie selfie hoodie
    brownie auntie calorie freebie sweetie hottie roomie bestie veggie indie genie pixie prairie collie
    birdie bookie budgie beanie cutie goodie hoagie laddie lassie magpie necktie pinkie quickie sortie
    talkie toughie townie smoothie stogie kiddie oldie baddie biggie cabbie commie druggie homie meanie
    preppie trekkie aussie boogie coterie menagerie reverie rotisserie walkie weenie
    """.split()
)
#: Endings of singular words that out-of-vocabulary "-s" stripping would mangle.
_SINGULAR_ENDINGS = ("ss", "us", "is")


def _english(word: str) -> bool:
    """Whether ``word`` is in the English word list of :func:`assoc.stats.sadcat.default_known_words`."""
    from assoc.stats.sadcat import default_known_words

    return word in default_known_words()


@functools.lru_cache(maxsize=1)
def _lemminflect() -> Any:
    try:
        with warnings.catch_warnings():
            # lemminflect's pickled tables trigger a NumPy deprecation warning on load
            warnings.simplefilter("ignore")
            import lemminflect

            lemminflect.getAllLemmas("warm-up")  # loads the tables now, under the filter
    except ImportError:  # pragma: no cover - a declared dependency
        from assoc.errors import DataError

        raise DataError(
            "singularisation needs the package lemminflect: pip install lemminflect (or pass singularize=False)"
        ) from None
    return lemminflect


@functools.lru_cache(maxsize=65536)
def singular_word(word: str) -> str:
    """The singular of one lowercase word (see the module docstring); other words unchanged."""
    if word in IRREGULAR:
        return IRREGULAR[word]
    if word in NOT_PLURAL or not word.isalpha() or len(word) < 3:
        return word
    if word.endswith("ies") and word[:-1] in IE_NOUNS:
        return word[:-1]
    li = _lemminflect()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lemmas = li.getAllLemmas(word)
    if lemmas:
        if any(word in forms for pos, forms in lemmas.items() if pos != "NOUN"):
            return word  # its own adjective, adverb or verb lemma (nervous, famous, always, dive)
        # a spelling variant with a hyphen is no singular ("cameraman" -> "camera-man")
        nouns = [n for n in lemmas.get("NOUN", ()) if n != word and ("-" not in n or "-" in word)]
        return str(nouns[0]) if nouns else word
    # out of LemmInflect's vocabulary: -men compounds, -ees and -us nouns whose singular is an English word
    if word.endswith("men") and len(word) >= 6 and _english(word[:-3] + "man"):
        return word[:-3] + "man"  # congressmen, englishmen, congresswomen
    if word.endswith("ees") and _english(word[:-1]):
        return word[:-1]  # divorcees (LemmInflect's rules give "divorce")
    if word.endswith("us") and not word.endswith("ous") and _english(word[:-1]) and not _english(word):
        return word[:-1]  # hindus, zulus
    if word.endswith("s") and not word.endswith(_SINGULAR_ENDINGS):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            oov = li.getLemma(word, upos="NOUN", lemmatize_oov=True)
        if oov and oov[0]:
            return str(oov[0])
    return word


def singularize(text: str) -> str:
    """Singularise the last word of a lowercase phrase ("hard workers" -> "hard worker")."""
    head, _, last = text.rpartition(" ")
    if not last:
        return text
    single = singular_word(last)
    return f"{head} {single}" if head else single
