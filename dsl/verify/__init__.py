"""Well-formedness checks on IR: `tir.verify_prim_func` and `relax.verify_module`.

The parser runs them on what it builds, `PassContext(verify=True)` after every pass.
`relax.py` also holds the struct-info inference (call results, joins, compatibility)
that the Relax parser and legalization share with the checker.
"""
