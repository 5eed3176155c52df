"""JSON parsing with bounds: nesting depth and integer size, each refused with its own error.

`json.loads` raises RecursionError on very deep nesting and ValueError on integers over
Python's 4,300-digit limit; both are turned into errors a caller can name, and depth is
checked on the parsed value as well (without recursion).
"""

import json


class TooDeep(ValueError):
    """Nested deeper than allowed."""


class NumberTooLong(ValueError):
    """An integer with more digits than allowed."""


def _parse_int(max_digits: int):
    def parse(text: str) -> int:
        if len(text.lstrip("-")) > max_digits:
            raise NumberTooLong(f"an integer of {len(text.lstrip('-'))} digits (at most {max_digits})")
        return int(text)

    return parse


def depth(value) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            deepest = max(deepest, level)
            stack.extend((v, level + 1) for v in item.values())
        elif isinstance(item, list):
            deepest = max(deepest, level)
            stack.extend((v, level + 1) for v in item)
    return deepest


def loads(data, *, max_depth: int = 32, max_int_digits: int = 30):
    """Parse `data`; raises json.JSONDecodeError, TooDeep or NumberTooLong (all ValueErrors)."""
    try:
        value = json.loads(data, parse_int=_parse_int(max_int_digits))
    except RecursionError:
        raise TooDeep(f"nested more than {max_depth} levels deep") from None
    if depth(value) > max_depth:
        raise TooDeep(f"nested more than {max_depth} levels deep")
    return value
