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


def float32_main(params: dict[str, tuple[int, ...]], body: str, header: str) -> str:
    """`dataflow_main` over float32 tensors of the given shapes, result unannotated."""
    args = ", ".join(f'{n}: R.Tensor({s}, "float32")' for n, s in params.items())
    lines = "".join(f"            {line}\n" for line in body.strip().splitlines())
    return (
        f"{header}@I.ir_module\nclass Module:\n    @R.function\n    def main({args}):\n"
        f"        with R.dataflow():\n{lines}            R.output(gv)\n        return gv\n"
    )
