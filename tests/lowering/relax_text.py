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


def unary_chain(ops: tuple[str, ...], scale: str = "2.0") -> str:
    """A graph function over a (16,) float32 `x` applying each of `ops` in turn,
    then a multiply by `scale`: one kernel per operator (the minimal pipeline
    does not fuse)."""
    lines, prev = [], "x"
    for k, op in enumerate(ops):
        lines.append(f"        v{k} = R.{op}({prev})")
        prev = f"v{k}"
    body = "\n".join(lines)
    return f"""
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((16,), "float32")) -> R.Tensor((16,), "float32"):
{body}
        out = R.multiply({prev}, R.const({scale}, "float32"))
        return out
"""
