"""The `--documents START:END` range of `draft_report` and `bench/drafter_bench.py`: one rule."""


def document_range(text: str, count: int, holder: str) -> range:
    """Document positions START to END (END excluded) of `holder`'s `count` documents, cut to them;
    ValueError with the message to show when the text is no such range."""
    try:
        start, end = (int(x) for x in text.split(":"))
    except ValueError:
        raise ValueError(
            f"--documents takes START:END (document positions, END excluded), e.g. 50:100; got {text!r}"
        ) from None
    if not 0 <= start < end:
        raise ValueError(f"--documents takes START:END with 0 <= START < END, e.g. 50:100; got {text!r}")
    if start >= count:
        raise ValueError(f"--documents {text}: {holder} has documents 0 to {count - 1}")
    return range(start, min(end, count))
