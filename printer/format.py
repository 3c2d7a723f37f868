"""`tvms fmt`: a text in canonical form that keeps every comment the user wrote,
or a located error naming a comment it cannot keep (the file then stays as it is).

Where each comment goes is decided once, by the grammar and the parsers
(dsl/comments.py); this module checks the result: the comments of the printed
text must be those of the input, each as often, whatever the placement code did.
Lines the printer writes itself (TVM's header, the root-block line, the metadata
footer) are the printer's and take no part in the count.
"""

from __future__ import annotations

from collections import Counter

from tvmlite.diagnostics import ParseError
from tvmlite.dsl.comments import HEADER_LINES, METADATA_FOOTER, ROOT_MARKERS
from tvmlite.dsl.dialect import detect_dialect
from tvmlite.dsl.metadata import ConstantsSource
from tvmlite.dsl.parse.module import parse_commented
from tvmlite.grammar import comment_texts, syntax, tokenize

PRINTERS_OWN = HEADER_LINES | set(ROOT_MARKERS) | {METADATA_FOOTER}


def format_text(
    text: str,
    filename: str | None = None,
    dialect: str | None = None,
    constants: ConstantsSource | None = None,
) -> str:
    """`text` printed canonically (in `dialect`, default its own: a lone function
    has no record of its dialect, so it is read off the text again), comments kept.
    A text without a newline after its last line (as TVM's `script()` writes it)
    keeps that ending: it is no reason to rewrite a file.
    Raises ParseError for text that does not parse and, located at the comment,
    when a comment would be dropped. `constants` are the values of its metadata
    references, as for `parse` (the text refers to them by the same numbers
    once printed)."""
    from tvmlite.printer import script

    # Layout only: a module TVM prints with its well-formedness check off formats too.
    parsed, tree = parse_commented(text, filename, constants=constants, check_well_formed=False)
    if tree.lost:
        first = tree.lost[0]
        raise ParseError(_refusal(first.reason), first.note.span, filename)
    docstring = _docstring(tree)
    if docstring is not None:
        message = "cannot keep this docstring: the printer writes none (make it a comment)"
        raise ParseError(f"{message}; the text is left unchanged", docstring.span, filename)
    out = script(parsed, dialect=dialect or detect_dialect(text, tokenize(text)))
    written = Counter(line for line in comment_texts(out) if line not in PRINTERS_OWN)
    for note in tree.notes:
        if note.text in PRINTERS_OWN:
            continue
        if written[note.text] == 0:
            raise ParseError(_refusal("no printed line holds it"), note.span, filename)
        written[note.text] -= 1
    for note in tree.notes:  # the placement code printed one twice: never write that
        if written[note.text] > 0:
            message = "cannot format: this comment would be printed twice"
            raise ParseError(f"{message}; the text is left unchanged", note.span, filename)
    return out if text.endswith("\n") else out.rstrip("\n")


def _docstring(tree: syntax.Module) -> syntax.Node | None:
    """The first string statement of the text (the parsers accept and drop them)."""
    bodies = [tree.body]
    while bodies:
        for stmt in bodies.pop():
            if isinstance(stmt, syntax.ExprStmt) and isinstance(stmt.value, syntax.Constant):
                if isinstance(stmt.value.value, str):
                    return stmt
            for name in ("body", "orelse"):
                bodies.append(getattr(stmt, name, ()))
    return None


def _refusal(reason: str) -> str:
    return f"cannot keep this comment: {reason}; the text is left unchanged"
