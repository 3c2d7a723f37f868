"""TVMScript text of a one-function Relax module, for tests that build many."""

from __future__ import annotations


def dataflow_main(params: str, ret: str, body: str, header: str, extra: str = "") -> str:
    """`header`, then a module whose `main(params) -> ret` runs the lines of `body`
    (which binds `gv` and outputs it) in one dataflow block and returns `gv`;
    `extra` follows the function."""
    lines = "".join(f"            {line}\n" for line in body.strip().splitlines())
    return (
        header
        + f"""@I.ir_module
class Module:
    @R.function
    def main({params}) -> {ret}:
        with R.dataflow():
{lines}        return gv
{extra}"""
    )
