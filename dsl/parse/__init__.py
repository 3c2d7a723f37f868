"""Syntax tree (`grammar/syntax.py`) to IR: `module.py` owns the module level and the
entry points (`parse`, `parse_file`, `parse_commented`), `scope.py` the name scopes
and the parse context, `tir/` prim function bodies and TIR expressions, `relax/`
Relax function bodies, expressions, calls and struct info.
"""
