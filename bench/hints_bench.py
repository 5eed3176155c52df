"""Atomicity hints on long author text: the linear `joins_two_facts` against the quadratic one it
replaced (re-tokenising the text before every "and"/"but"), side by side in one run, on ACUs of
"and " x n (issue 26, item 3). The editor refuses ACUs over 1,000 characters; longer texts here
show the growth. Run: .venv/bin/python bench/hints_bench.py"""

import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from annotation.hints import joins_two_facts, reference_hints
from annotation.text import content_words

_JOINER = re.compile(r"\b(and|but)\b", re.IGNORECASE)


def quadratic(text: str) -> str | None:
    """The check before issue 26."""
    for match in _JOINER.finditer(text):
        left, right = text[: match.start()], text[match.end() :]
        if len(content_words(left)) >= 3 and len(content_words(right)) >= 3:
            return match.group(1).lower()
    return None


def seconds(fn, text: str) -> float:
    start = time.perf_counter()
    fn(text)
    return time.perf_counter() - start


def main() -> None:
    print(f"{'characters':>10} {'linear s':>10} {'reference_hints s':>18} {'before s':>10}")
    for chars in (1_000, 4_000, 16_000, 48_000):
        text = "and " * (chars // 4)
        linear = seconds(joins_two_facts, text)
        whole = seconds(lambda t: reference_hints([("A sentence.", [t, "Another fact here."])], 7.0), text)
        before = f"{seconds(quadratic, text):10.3f}" if chars <= 16_000 else f"{'(skipped)':>10}"
        print(f"{chars:>10,} {linear:10.4f} {whole:18.4f} {before}")


if __name__ == "__main__":
    main()
