"""A rough guess of a text's language, offline and with no model, for the check that a post
keeps the language of the question: the writing system by its letters' Unicode blocks, and
for Latin script the language of the most common short words of six languages. None when it
cannot tell (too few such words, a tie, a script it does not know): the check is then left
out, not failed."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

# Frequent short words of each language (a word two languages share counts for both).
_WORDS = {
    "en": "the and is are you to of it that this what with for not have be was how can "
    "we i my your do does should before after where when thanks please will would there "
    "they our from about",
    "pt": "o os as um uma é são não que de do da dos das em no na para com você por mais "
    "eu me meu minha vamos nós tem isso esta este muito obrigado obrigada como quando onde "
    "também já oi ou",
    "es": "el los las un una es son no que de del en para con usted por más y está qué "
    "yo mi tú nosotros hay esto este muy gracias cómo cuándo dónde también ya hoy podemos",
    "fr": "le les un une est sont ne pas que de du des en pour avec vous et qui ce dans "
    "je mon ma nous il elle cette très merci comment quand où aussi déjà sur",
    "de": "der die das ein eine ist sind nicht und zu den dem mit für sie ich wie was "
    "wir mein auch noch schon heute haben hat wenn wo danke bitte sollen",
    "it": "il lo gli un una è sono non che di del della per con lei e come cosa "
    "io mio noi anche già oggi abbiamo quando dove grazie molto questo questa",
}
_VOCABULARY = {language: set(words.split()) for language, words in _WORDS.items()}
_SCRIPTS = (
    ("HIRAGANA", "ja"),
    ("KATAKANA", "ja"),
    ("HANGUL", "ko"),
    ("CJK", "zh"),
    ("CYRILLIC", "cyrillic"),
    ("GREEK", "el"),
    ("ARABIC", "ar"),
    ("HEBREW", "he"),
    ("DEVANAGARI", "hi"),
    ("THAI", "th"),
    ("LATIN", "latin"),
)
_TOKEN = re.compile(r"\w+", re.UNICODE)
_NOT_PROSE = re.compile(r"<[^>]*>|https?://\S+|`[^`]*`")
MIN_WORDS = 2  # function words needed to name a Latin-script language


def language_of(text: str) -> str | None:
    text = _NOT_PROSE.sub(" ", text)  # mentions, links and code say nothing of the language
    script = _script(text)
    if script != "latin":
        return script
    counts: Counter[str] = Counter()
    for token in _TOKEN.findall(text.lower()):
        for language, words in _VOCABULARY.items():
            if token in words:
                counts[language] += 1
    ranked = counts.most_common(2)
    if not ranked or ranked[0][1] < MIN_WORDS:
        return None
    if len(ranked) == 2 and ranked[1][1] == ranked[0][1]:
        return None
    return ranked[0][0]


def _script(text: str) -> str | None:
    seen: Counter[str] = Counter()
    for char in text:
        if not char.isalpha():
            continue
        name = unicodedata.name(char, "")
        for block, script in _SCRIPTS:
            if name.startswith(block):
                seen[script] += 1
                break
    if not seen:
        return None
    # Kana among kanji is Japanese, whatever the count.
    if seen["ja"] and seen["zh"]:
        return "ja"
    most: str = seen.most_common(1)[0][0]
    return most
