"""`@T.prim_func` bodies and TIR expressions to `tir` IR (entry: `func.py`)."""
