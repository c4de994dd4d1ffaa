"""One-character query sets, generated from a Chinese collection's corpus (nothing committed).

Built the way zh-cmrc2018-partial-words was (see its SOURCE.md), one character instead of a
two-character piece: for a randomly chosen document, one 2–4 character all-CJK word of its
Jieba segmentation (``jieba.lcut``) is picked, and one character of it that is *not itself*
a word of that document's segmentation becomes the query (a character Chinese users type
alone: 燉 of 燉煮, 鴨 of 烤鴨). **Every** document whose title or text contains the character
is relevant; characters held by more than 30 documents are drawn again (as the partial-word
set has 1–30 relevant documents a query), so a literal scan scores Recall@100 = 1.0.

* ``zh-cmrc2018-single-chars``: 300 queries drawn from the DEV_ paragraphs (seed 1);
* ``zh-cmrc2018-single-chars-heldout``: 300 queries drawn from the TRIAL_ paragraphs with
  another seed, over the corpus in Traditional script (OpenCC s2t; the queries too). The
  data folder holds no second Chinese corpus, so this is held out by documents, seed and
  script, not by source.
"""

from __future__ import annotations

import random
import re

from common import Collection

NAMES = ("zh-cmrc2018-single-chars", "zh-cmrc2018-single-chars-heldout")
BASE = "zh-cmrc2018"
MAX_RELEVANT = 30
_CJK_WORD = re.compile(r"[\u3400-\u9fff]{2,4}")


def single_char_collection(base: Collection, name: str, n: int = 300) -> Collection:
    """The set ``name`` (one of NAMES) built from ``base`` (zh-cmrc2018)."""
    import jieba

    heldout = name.endswith("-heldout")
    rnd = random.Random(2 if heldout else 1)
    pool = sorted(d for d in base.corpus if d.startswith("TRIAL_" if heldout else "DEV_"))
    corpus = base.corpus
    if heldout:
        import opencc

        conv = opencc.OpenCC("s2t").convert
        corpus = {d: {"title": conv(v["title"]), "text": conv(v["text"])} for d, v in corpus.items()}
    texts = {d: v["title"] + "\n" + v["text"] for d, v in corpus.items()}
    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    seen: set[str] = set()
    tries = 0
    while len(queries) < n and tries < 50 * n:
        tries += 1
        doc = rnd.choice(pool)
        words = jieba.lcut(texts[doc])
        held = set(words)
        candidates = [w for w in words if _CJK_WORD.fullmatch(w)]
        if not candidates:
            continue
        word = rnd.choice(candidates)
        chars = [c for c in word if c not in held and c not in seen]
        if not chars:
            continue
        char = rnd.choice(chars)
        relevant = [d for d, t in texts.items() if char in t]
        if not 1 <= len(relevant) <= MAX_RELEVANT:
            continue
        seen.add(char)
        qid = f"SC_{len(queries)}"
        queries[qid] = char
        qrels[qid] = dict.fromkeys(relevant, 1)
    return Collection(name, corpus, queries, qrels)
