"""tvmlite: a pure-Python, TVMScript-compatible compiler toolkit.

    mod = tvmlite.parse(text)          # IRModule (or a lone function)
    print(mod.script())                # canonical text, in the dialect it came in
    tvmlite.structural_equal(a, b)     # equal up to renaming of bound variables
"""

from tvmlite.diagnostics import ParseError, TVMLiteError, VerifyError
from tvmlite.dsl.module import IRModule
from tvmlite.dsl.parser import parse, parse_file
from tvmlite.dsl.structural import structural_equal, structural_hash

__version__ = "0.1.0"

__all__ = [
    "IRModule",
    "ParseError",
    "TVMLiteError",
    "VerifyError",
    "parse",
    "parse_file",
    "structural_equal",
    "structural_hash",
]
