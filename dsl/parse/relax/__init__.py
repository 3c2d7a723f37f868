"""`@R.function` bodies, Relax expressions, calls and struct info to `relax` IR.

Entry: `func.py`.
"""
