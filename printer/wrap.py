"""Signatures wrapped for reading: `show(..., width=100)` puts each parameter of a
`def` line longer than `width` on a line of its own, as Python formatters do.

TVM prints a signature on one line however long (a real model's runs to
thousands of characters), and `script()` keeps TVM's text; only what is shown
for reading is wrapped. The wrapped text is still TVMScript: it parses to the
same module.
"""

from __future__ import annotations

_OPEN, _CLOSE = "([{", ")]}"


def wrap_signatures(text: str, width: int) -> str:
    """`text` with every `def` line longer than `width` wrapped, one parameter a line."""
    lines = text.split("\n")
    out: list[str] = []
    for line in lines:
        stripped = line.lstrip()
        if len(line) > width and stripped.startswith("def "):
            out.extend(_wrapped(line, len(line) - len(stripped)))
        else:
            out.append(line)
    return "\n".join(out)


def _wrapped(line: str, indent: int) -> list[str]:
    """The lines of one signature: `def name(`, the parameters, `) -> ...:`; the
    line as it is when it has no parameter list to split."""
    start = line.find("(")
    parts: list[str] = []
    depth, quote, begin = 0, "", start + 1
    k = start
    while k < len(line):
        ch = line[k]
        if quote:
            if ch == "\\":
                k += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            return [line]  # a comment before the parameters end: not a printed signature
        elif ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
            if depth == 0:
                parts.append(line[begin:k])
                break
        elif ch == "," and depth == 1:
            parts.append(line[begin:k])
            begin = k + 1
        k += 1
    params = [p.strip() for p in parts if p.strip()]
    if start < 0 or depth != 0 or not params:
        return [line]
    pad = " " * (indent + 4)
    return [line[: start + 1], *(f"{pad}{p}," for p in params), " " * indent + line[k:]]
