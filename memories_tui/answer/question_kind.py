"""What kind of fact a question asks for, and whether a sentence states one.

A question asking how long (多久) wants a duration, how many (幾) a count, when (何時) a date,
where (哪裡) a place, what a name means (意思) a sentence saying 意為 or "means"; other amount
questions (what temperature, 多少) want a number. The
extractive answerer prefers sentences that state the kind asked for, so the sentence with
"一個半小時" beats one that only repeats the question's words. Both the question and the
sentence are matched folded (Simplified script, lower case), as ``segment.fold`` gives them.
"""

from __future__ import annotations

import re

DURATION = "duration"
COUNT = "count"
DATE = "date"
PLACE = "place"
AMOUNT = "amount"
MEANING = "meaning"

_NUMERAL = "零〇一二三四五六七八九十百千万亿两半几数"
_TIME_UNIT_ZH = "秒|分钟|分|小时|钟头|个钟|天|日|周|星期|礼拜|个月|月|年|世纪"
_TIME_UNIT_EN = r"sec(?:ond)?s?|min(?:ute)?s?|h(?:ou)?rs?|hours?|days?|weeks?|months?|years?|decades?|centur(?:y|ies)"
_MEASURE = "个|只|条|本|张|位|名|人|次|件|台|辆|家|座|所|种|部|首|篇|棵|头|匹|块|元|岁|层|届|倍|项|场|支|艘|架|枚"

_ASKS = (
    (DATE, re.compile(r"(?:民国|公元|西元|昭和|明治|大正|平成)(?:几|多少|哪一?)年")),  # 民國幾年: a year, not a duration
    (DURATION, re.compile(r"\bhow\s+long\b|多久|多长时间|多少(?:时间|天|年|小时|分钟|秒)|几(?:个)?(?:小时|分钟|天|年|个月|周|秒)"
                          rf"|\bhow\s+many\s+(?:{_TIME_UNIT_EN})\b")),
    (DATE, re.compile(r"\bwhen\b|\bwhat\s+(?:year|date|day|month|time)\b|\bwhich\s+(?:year|date|day|month)\b"
                      r"|何时|[什甚]么时[候间]|哪一?年|哪一?天|哪个月|几月|几号|几年级|何年|日期")),
    (PLACE, re.compile(r"\bwhere\b|\bwhich\s+(?:city|country|place|town|province|state)\b"
                       r"|哪里|哪儿|何处|何地|在哪|什么地方|哪个(?:城市|国家|地方|省)|哪座|哪国")),
    (MEANING, re.compile(r"意思|含义|意义是|意为|意指|意谓|\bwhat\s+(?:does|do|did)\b.*\bmean\b|\bmeaning\b"
                         r"|\bstands?\s+for\b")),
    (COUNT, re.compile(r"\bhow\s+(?:many|much)\b|多少|几")),
    (AMOUNT, re.compile(
        r"\bhow\s+(?:far|old|big|large|tall|high|hot|cold|warm|heavy|often|fast|deep|wide|soon)\b"
        r"|\b(?:what|which|at\s+what)\s+(?:temperature|temp|age|size|price|cost|percentage|percent|number|amount|"
        r"weight|length|distance|speed|dose|ratio|rate|height|depth|volume)s?\b"
        r"|多大|多高|多长|多重|多远|多快|多深|多宽|温度|价格|比例")),
)

_DIGITS = r"\d[\d.,]*"
_STATES = {
    DURATION: re.compile(rf"(?:{_DIGITS}|[{_NUMERAL}]+)\s*(?:{_TIME_UNIT_ZH})|{_DIGITS}\s*(?:{_TIME_UNIT_EN})\b"
                         r"|\b(?:an?|one|two|three|four|five|six|seven|eight|nine|ten|half\s+an?)\s+"
                         rf"(?:{_TIME_UNIT_EN})\b|半(?:个)?(?:小时|天|年|月)", re.IGNORECASE),
    DATE: re.compile(rf"\d{{3,4}}\s*年|[〇零一二三四五六七八九]{{4}}年|(?:民国|公元|西元|昭和|明治|大正|平成)[{_NUMERAL}\d]+年|[{_NUMERAL}\d]+\s*月[{_NUMERAL}\d]*\s*[日号]?|\b1[5-9]\d\d\b|\b20\d\d\b"
                     r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d"
                     r"|\d{1,2}[/-]\d{1,2}[/-]\d{2,4}|(?:星期|周|礼拜)[一二三四五六日天]|昨天|今天|明天|去年|今年|明年"
                     r"|世纪", re.IGNORECASE),
    PLACE: re.compile(r"[\u4e00-\u9fff](?:省|市|县|区|镇|乡|村|路|街|国|州|岛|山|河|湖|海|港|站|湾|城|宫|寺|馆)"),
    COUNT: re.compile(rf"{_DIGITS}|[{_NUMERAL}]+\s*(?:{_MEASURE}|度|米|克|斤|里)"),
    MEANING: re.compile(r"意为|意指|意谓|意即|意思|含义|之意|意味|是指|指的是|\bmeans?\b|\bmeaning\b|\brefers?\s+to\b"
                        r"|\bstands?\s+for\b"),
    AMOUNT: re.compile(rf"{_DIGITS}|[{_NUMERAL}]+[{_MEASURE}度米克斤里]"),
}
_ANY_NUMBER = re.compile(rf"\d|[{_NUMERAL}]+(?:{_MEASURE}|{_TIME_UNIT_ZH}|度|米|克|斤|里)")


def kinds_asked(folded_question: str) -> tuple[str, ...]:
    """The kinds of fact a (folded) question asks for, most specific first; () for none."""
    return tuple(dict.fromkeys(kind for kind, pattern in _ASKS if pattern.search(folded_question)))


# A capitalised name after in / at / near, or a street (on Mill Lane, 12 Baker St.).
_EN_PLACE = re.compile(r"\b(?:in|at|near|from|to)\s+(?:the\s+)?[A-Z]"
                       r"|\b[A-Z0-9][\w'-]*\s+(?:Street|St|Road|Rd|Avenue|Ave|Lane|Boulevard|Blvd|Way|Square|Drive)\b")


def states(kind: str, sentence: str, folded: str) -> bool:
    """Whether a sentence states a fact of ``kind`` (its folded text; the original too, where
    case marks an English place name)."""
    if _STATES[kind].search(folded) is not None:
        return True
    return kind == PLACE and _EN_PLACE.search(sentence) is not None


def states_a_number(sentence: str) -> bool:
    return _ANY_NUMBER.search(sentence) is not None
