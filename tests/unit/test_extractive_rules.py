"""The extractive answerer's reading of Traditional and written-Chinese questions, of
sentences, and of the note's title: each rule checked on a small note."""

from __future__ import annotations

import pytest

from memories_tui.answer.extractive import _question_terms, extract_answer, split_sentences
from memories_tui.answer.question_kind import DATE, MEANING, kinds_asked, states
from memories_tui.answer.types import EXTRACTIVE, Source
from memories_tui.text.segment import fold


def _source(title: str, text: str) -> Source:
    return Source("S1", "r1", 1, 0, len(text.encode()), title, text=text, chunk_hash="h")


def _parts(text: str) -> list[str]:
    return [text[a:b] for a, b in split_sentences(text)]


def test_an_initial_or_a_title_does_not_end_a_sentence() -> None:
    text = "Roy H. Reinhart named the order. He met Dr. Smith at St. Paul. Then he left."
    assert _parts(text) == ["Roy H. Reinhart named the order.", "He met Dr. Smith at St. Paul.", "Then he left."]


def test_a_semicolon_joins_the_clauses_of_one_sentence() -> None:
    text = "作品要具備三點要素：一是要有原創性；二是要為作者創作；三是固定在媒介上。而其中最重要的是第一點。"
    assert _parts(text) == ["作品要具備三點要素：一是要有原創性；二是要為作者創作；三是固定在媒介上。", "而其中最重要的是第一點。"]


@pytest.mark.parametrize(("question", "dropped"), [
    ("下列何者是台灣的直轄市？", "何者"),
    ("該條約是何人所簽訂？", "何人"),
    ("何種動物會冬眠？", "何种"),
    ("他甚麼時候出生？", "甚么"),
    ("哪一位總統最早？", "一位"),  # a piece of the question word 哪一位
    ("能給我介紹一下什麼是BCPL么？", "幺"),
    ("能給我介紹一下什麼是BCPL么？", "一下"),  # a request, not what is asked about
    ("簡述黃埔港的重要性？", "简述"),
    ("Please explain how to stew the pork", "explain"),
])
def test_question_words_of_taiwan_and_written_chinese_are_not_terms(question: str, dropped: str) -> None:
    terms = _question_terms(question)
    assert dropped not in terms and terms  # the question's content words stay


@pytest.mark.parametrize(("question", "kind"), [
    ("該校於民國幾年成立？", DATE), ("他甚麼時候出生？", DATE), ("這首歌在什麼時間發行？", DATE),
    ("喇嘛的意思是什麼？", MEANING), ("What does lama mean?", MEANING),
])
def test_traditional_question_cues_ask_their_kind_first(question: str, kind: str) -> None:
    assert kinds_asked(fold(question))[:1] == (kind,)


@pytest.mark.parametrize(("sentence", "kind", "says"), [
    ("他生於一九九八年。", DATE, True), ("學校於民國八十七年成立。", DATE, True), ("他有三個兒子。", DATE, False),
    ("喇嘛意為上師。", MEANING, True), ("Lama means teacher.", MEANING, True), ("喇嘛住在寺中。", MEANING, False),
])
def test_a_sentence_states_a_date_or_a_meaning(sentence: str, kind: str, says: bool) -> None:
    assert states(kind, sentence, fold(sentence)) is says


def test_a_meaning_question_is_answered_by_the_sentence_saying_what_the_name_means() -> None:
    text = "喇嘛在西藏各地的地位稍有不同，多住在寺院中。喇嘛是藏傳佛教的術語，意為上師、上人。"
    ans = extract_answer("喇嘛的意思是什麼？", [_source("喇嘛", text)], max_sentences=1)
    assert ans.status == EXTRACTIVE and "上師" in ans.answer


def test_a_name_jieba_glued_to_the_next_character_is_met_as_the_titles_name() -> None:
    """Jieba cuts 王連字什麼 as 王連字 / 什麼: held nowhere, it stands for 王連, the note's title."""
    text = "王連，字文儀，南陽人。三國時蜀漢官員。"
    assert "王连字" in _question_terms("王連字什麼？")
    rarity_of = {"王连": 6.0, "王连字": 7.8}

    def rarity(terms: list[str]) -> list[float]:
        return [rarity_of.get(t, 2.0) for t in terms]

    ans = extract_answer("王連字什麼？", [_source("王連", text)], rarity=rarity, max_sentences=1)
    assert ans.status == EXTRACTIVE and [s.text for s in ans.sentences] == ["王連，字文儀，南陽人。"]


def test_a_name_glued_to_a_function_character_is_unglued_though_part_of_it_is_held() -> None:
    """王沈是 holds 王沈 in part (its piece 王沈): it is still unglued, so the sentence holds the name."""
    text = "王沈，字處道，太原晉陽人。祖王柔，漢匈奴中郎將。"
    rarity_of = {"王沈": 6.0, "王沈是": 7.8, "人": 1.2}

    def rarity(terms: list[str]) -> list[float]:
        return [rarity_of.get(t, 2.0) for t in terms]

    ans = extract_answer("王沈是哪裡人？", [_source("王沈 (太原)", text)], rarity=rarity, max_sentences=1)
    assert ans.status == EXTRACTIVE and [s.text for s in ans.sentences] == ["王沈，字處道，太原晉陽人。"]


def test_the_titles_bigrams_count_for_each_of_its_sentences() -> None:
    """A sentence repeating the title's name does not outrank the one that answers for the
    name's character pairs alone: 本站 stands for the title 大沙地站."""
    text = "大沙地站的月台設於地下二層，大沙地站的大堂設於地下一層。本站的月台是島式月台。"
    ans = extract_answer("大沙地站的月台是什麼樣的？", [_source("大沙地站", text)], max_sentences=1)
    assert ans.status == EXTRACTIVE and [s.text for s in ans.sentences] == ["本站的月台是島式月台。"]


def test_a_full_stop_after_a_number_ends_an_english_sentence() -> None:
    """A sentence ending in a year, a time or an amount ends there (April 2025. The hotel …);
    a list's number (Steps: 1. Mix), a decimal and No. 5 still end nothing."""
    text = "We stayed in Kyoto in April 2025. The hotel was near Gion. Lunch is at 12:30. Then we rest."
    assert _parts(text) == ["We stayed in Kyoto in April 2025.", "The hotel was near Gion.", "Lunch is at 12:30.",
                            "Then we rest."]
    assert _parts("Steps: 1. Mix the flour. 2. Bake it. Pi is 3.14 here. See No. 5. It works.") == [
        "Steps: 1. Mix the flour.", "2. Bake it.", "Pi is 3.14 here.", "See No. 5. It works."]
    note = "Next dentist appointment is on March 14 at 9:30. The clinic is on Baker Street, second floor."
    ans = extract_answer("Where is the dentist clinic?", [_source("Dentist", note)], max_sentences=1)
    assert [s.text for s in ans.sentences] == ["The clinic is on Baker Street, second floor."]


def test_a_chinese_full_stop_after_a_number_still_ends_a_sentence() -> None:
    assert _parts("價格是100。下一句在這裡。It costs 80! Next.") == ["價格是100。", "下一句在這裡。", "It costs 80!", "Next."]


@pytest.mark.parametrize(("question", "terms"), [
    ("豆豆多重？", ["豆豆"]), ("豆豆有多重？", ["豆豆"]), ("湖水有多深？", ["湖水"]), ("門票多貴？", ["门票"]),
    ("HAT-P-2b距離地球有多遠？", ["hat", "p", "2b", "距离", "地球"]), ("謝爾的面積有多大？", ["谢尔", "面积"]),
    ("How heavy is the cat?", ["cat"]), ("How deep is the lake?", ["lake"]),
])
def test_how_heavy_deep_or_far_asks_an_amount_and_is_not_a_term(question: str, terms: list[str]) -> None:
    """有多重 / 多深 / 多遠 at a question's end, and how heavy / how deep, only say an amount is
    asked: Jieba cuts them as 多重, 有多遠, 有 + 多 + 大, words a note seldom holds, which then
    weighed as the question's rarest term."""
    assert _question_terms(question) == terms


@pytest.mark.parametrize(("title", "note", "question", "answer"), [
    ("猫", "我家的猫叫豆豆，是英国短毛猫。豆豆每天吃两次猫粮，体重四公斤。", "豆豆多重？", "豆豆每天吃两次猫粮，体重四公斤。"),
    ("貓", "我家的貓叫豆豆，是英國短毛貓。豆豆每天吃兩次貓糧，體重四公斤。", "豆豆有多重？", "豆豆每天吃兩次貓糧，體重四公斤。"),
    ("Our cat", "Our cat Doudou is a British Shorthair. Doudou weighs 4 kg and eats twice a day.",
     "How heavy is Doudou?", "Doudou weighs 4 kg and eats twice a day."),
])
def test_an_amount_question_is_answered_from_the_note(title: str, note: str, question: str, answer: str) -> None:
    rarity = {"豆豆": 3.0, "doudou": 3.0}

    ans = extract_answer(question, [_source(title, note)], rarity=lambda ts: [rarity.get(t, 2.0) for t in ts],
                         max_sentences=1)
    assert ans.status == EXTRACTIVE and [s.text for s in ans.sentences] == [answer]


TRIP_ZH = "花蓮之行，我們住在七星潭海邊的民宿。花蓮之行，我們一共住了三天。花蓮之行，我們一共去了五個人。花蓮之行，我們星期六出發。"
TRIP_EN = ("On the Hualien trip we stayed at Qixingtan by the sea. On the Hualien trip we stayed three days. "
           "On the Hualien trip we left in October 2023.")


@pytest.mark.parametrize(("title", "note", "question", "answer"), [
    ("花蓮之行", TRIP_ZH, "花蓮之行在哪裡？", "花蓮之行，我們住在七星潭海邊的民宿。"),
    ("花蓮之行", TRIP_ZH, "花蓮之行有多久？", "花蓮之行，我們一共住了三天。"),
    ("花蓮之行", TRIP_ZH, "花蓮之行一共幾個？", "花蓮之行，我們一共去了五個人。"),
    ("花蓮之行", TRIP_ZH, "花蓮之行是何時？", "花蓮之行，我們星期六出發。"),
    ("Hualien trip", TRIP_EN, "Where was the Hualien trip?", "On the Hualien trip we stayed at Qixingtan by the sea."),
    ("Hualien trip", TRIP_EN, "How long was the Hualien trip?", "On the Hualien trip we stayed three days."),
    ("Hualien trip", TRIP_EN, "When was the Hualien trip?", "On the Hualien trip we left in October 2023."),
])
def test_the_kind_of_fact_asked_picks_the_sentence_stating_it(title: str, note: str, question: str,
                                                              answer: str) -> None:
    """Every sentence holds the question's words alike; only the kind asked (where → a place,
    how long → a duration, how many → a count, when → a date) tells them apart."""
    ans = extract_answer(question, [_source(title, note)], max_sentences=1)
    assert ans.status == EXTRACTIVE and [s.text for s in ans.sentences] == [answer]


@pytest.mark.parametrize(("note", "answer"), [
    ("The gym costs 40 euros a month. The gym is in the old factory on Mill Lane.", "The gym is in the old factory on Mill Lane."),
    ("The gym opens at 6 every day. The gym is on King Road.", "The gym is on King Road."),
    ("The gym has 3 floors. The gym is behind the church, 12 Baker St.", "The gym is behind the church, 12 Baker St."),
])
def test_an_english_street_is_a_place(note: str, answer: str) -> None:
    """Where asks a place: a street (on Mill Lane, 12 Baker St.) states one, and the sentence
    with a bare number no longer wins over it."""
    ans = extract_answer("Where is the gym?", [_source("Notes", note)], max_sentences=1)
    assert [s.text for s in ans.sentences] == [answer]
