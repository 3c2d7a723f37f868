"""A Pygments lexer for `.tvms` (TVMScript) text.

Registered through the `pygments.lexers` entry point, so `pygmentize -l tvms`
and `get_lexer_for_filename("m.tvms")` find it once tvmlite is installed.
Pygments imports every plugin lexer when it searches by filename, so this file
imports nothing but `pygments.lexer` and `pygments.token`.

Beyond Python's colouring it tells apart what a reader of TVMScript looks for:
the `I.`/`T.`/`R.` namespaces (Name.Namespace) and their members (Name.Builtin),
dtypes both as constructors (`T.float32`) and as strings (`"float32"`), which
are Keyword.Type, and decorators as a whole (`@T.prim_func`).
"""

from __future__ import annotations

from typing import ClassVar

from pygments.lexer import RegexLexer, bygroups, default, include, words
from pygments.token import (
    Comment,
    Keyword,
    Name,
    Number,
    Operator,
    Punctuation,
    String,
    Text,
    Whitespace,
)

__all__ = ["KEYWORDS", "TvmsLexer"]

# The keyword terminals of grammar/tvms.lark (a test keeps the two in step), plus
# `as`, which the grammar writes as an anonymous literal.
KEYWORDS = (
    "and",
    "as",
    "assert",
    "break",
    "class",
    "continue",
    "def",
    "elif",
    "else",
    "for",
    "from",
    "if",
    "import",
    "in",
    "is",
    "lambda",
    "not",
    "or",
    "pass",
    "return",
    "while",
    "with",
)
CONSTANTS = ("True", "False", "None")

# Every dtype spelling of dsl/dtype.py, with optional vector lanes (`float32x4`).
DTYPE = (
    r"(?:bool|handle|void|u?int(?:4|8|16|32|64)|float(?:16|32|64)|bfloat16"
    r"|float8_e4m3fnuz|float8_e5m2fnuz|float8_e4m3fn|float8_e5m2|float8_e4m3b11fnuz"
    r"|float8_e4m3|float8_e3m4|float8_e8m0fnu|float6_e2m3fn|float6_e3m2fn|float4_e2m1fn)(?:x\d+)?"
)
IDENT = r"[^\W\d]\w*"
_PREFIX = r"(?:[rRuUbBfF]|[rR][bBfF]|[bBfF][rR])?"


class TvmsLexer(RegexLexer):
    """TVMScript: the Python subset of grammar/tvms.lark, with TVMScript's namespaces."""

    name = "TVMScript"
    url = "https://tvm.apache.org/docs/"
    aliases: ClassVar[list[str]] = ["tvms", "tvmscript"]
    filenames: ClassVar[list[str]] = ["*.tvms"]
    mimetypes: ClassVar[list[str]] = ["text/x-tvmscript"]

    tokens: ClassVar[dict] = {
        "root": [
            (r"\n", Whitespace),
            (r"[\t \f]+", Whitespace),
            (r"\\\r?\n", Text),
            (r"#[^\r\n]*", Comment.Single),
            (r"(@)(" + IDENT + r"(?:\." + IDENT + r")*)", bygroups(Name.Decorator, Name.Decorator)),
            (r"(def)([\t ]+)(" + IDENT + ")", bygroups(Keyword, Whitespace, Name.Function)),
            (r"(class)([\t ]+)(" + IDENT + ")", bygroups(Keyword, Whitespace, Name.Class)),
            include("strings"),
            include("numbers"),
            (words(KEYWORDS, suffix=r"\b"), Keyword),
            (words(CONSTANTS, suffix=r"\b"), Keyword.Constant),
            # `I.`, `T.`, `R.` and nested namespaces such as `R.nn.`
            (r"\b([ITR])(\.)", bygroups(Name.Namespace, Punctuation), "member"),
            (r"\b([ITR])\b", Name.Namespace),
            (r"\b(cls)\b", Name.Builtin.Pseudo),
            (r"\b(TypeVar|metadata)\b", Name.Builtin),
            (r"(\.)(" + IDENT + ")", bygroups(Punctuation, Name.Attribute)),
            (IDENT, Name),
            (r"\*\*=?|//=?|<<=?|>>=?|[-+*/%@&|^<>=!]=|[-+*/%@&|^~<>]", Operator),
            (r"=", Operator),
            (r"[()\[\]{}:,;.]", Punctuation),
        ],
        "member": [
            (r"(" + IDENT + r")(\.)", bygroups(Name.Namespace, Punctuation)),
            (DTYPE + r"\b", Keyword.Type, "#pop"),
            (IDENT, Name.Builtin, "#pop"),
            # anything else ends the member (e.g. broken text): never stall here
            default("#pop"),
        ],
        "strings": [
            (r'"' + DTYPE + r'"', Keyword.Type),
            (r"'" + DTYPE + r"'", Keyword.Type),
            (_PREFIX + r'"""(?:[^"\\]|\\[\s\S]|"(?!""))*"""', String.Double),
            (_PREFIX + r"'''(?:[^'\\]|\\[\s\S]|'(?!''))*'''", String.Single),
            (_PREFIX + r'"(?:[^"\\\n]|\\(?:\r\n|[\s\S]))*"', String.Double),
            (_PREFIX + r"'(?:[^'\\\n]|\\(?:\r\n|[\s\S]))*'", String.Single),
        ],
        "numbers": [
            (r"0[xX](?:_?[\da-fA-F])+|0[oO](?:_?[0-7])+|0[bB](?:_?[01])+", Number.Hex),
            (
                r"(?:(?:\d(?:_?\d)*\.(?:\d(?:_?\d)*)?|\.\d(?:_?\d)*)(?:[eE][-+]?\d(?:_?\d)*)?"
                r"|\d(?:_?\d)*[eE][-+]?\d(?:_?\d)*)[jJ]?",
                Number.Float,
            ),
            (r"\d(?:_?\d)*[jJ]?", Number.Integer),
        ],
    }
