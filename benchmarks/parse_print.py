"""Parse and print throughput on two generated modules, against TVM when installed.

  python benchmarks/parse_print.py [--bindings 4000] [--funcs 500]

(a) one Relax function with N bindings; (b) a module of M legalized prim
functions called from `main`. Prints lines/s for tvmlite's parse and print and,
when apache-tvm is importable, TVM's `from_source` / `script()` on the same text
with the ratios, all from one run.
"""

from __future__ import annotations

import argparse
import time

import tvmlite

HEADER_RELAX = "# from tvm.script import ir as I\n# from tvm.script import relax as R\n\n"
HEADER_TIR = (
    "# from tvm.script import ir as I\n# from tvm.script import tirx as T\n"
    "# from tvm.tirx.layout import Axis\n# from tvm.script import relax as R\n\n"
)


def relax_chain(n: int) -> str:
    """One function, `n` alternating add/multiply/reshape bindings."""
    sig = 'x: R.Tensor((2, 8, 32), dtype="float32")'
    ann = 'R.Tensor((2, 8, 32), dtype="float32")'
    lines = [HEADER_RELAX + "@I.ir_module\nclass Module:\n    @R.function"]
    lines.append(f"    def main({sig}) -> {ann}:")
    lines.append("        with R.dataflow():")
    prev = "x"
    for i in range(n):
        name = f"lv{i}"
        if i % 3 == 0:
            rhs = f"R.add({prev}, x)"
        elif i % 3 == 1:
            rhs = f"R.multiply({prev}, {prev})"
        else:
            rhs = f"R.reshape({prev}, R.shape([2, 8, 32]))"
        lines.append(f"            {name}: {ann} = {rhs}")
        prev = name
    lines.append(f"            gv: {ann} = {prev}")
    lines.append("            R.output(gv)")
    lines.append("        return gv")
    return "\n".join(lines) + "\n"


def legalized_module(m: int) -> str:
    """`m` add kernels (4x16 float32, blocks and remap), each called once from main."""
    out = [HEADER_TIR + "@I.ir_module\nclass Module:"]
    buf = 'T.Buffer((T.int64(4), T.int64(16)), "float32")'
    for k in range(m):
        out.append(
            f"""    @T.prim_func(private=True, s_tir=True)
    def add{k}(x: {buf}, y: {buf}, T_add: {buf}):
        T.func_attr({{"tirx.noalias": True}})
        # with T.sblock("root"):
        for ax0, ax1 in T.grid(T.int64(4), T.int64(16)):
            with T.sblock("T_add"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(x[v_ax0, v_ax1], y[v_ax0, v_ax1])
                T.writes(T_add[v_ax0, v_ax1])
                T_add[v_ax0, v_ax1] = x[v_ax0, v_ax1] + y[v_ax0, v_ax1]
"""
        )
    ann = 'R.Tensor((4, 16), dtype="float32")'
    body = [f"    @R.function\n    def main(x: {ann}, y: {ann}) -> {ann}:", "        cls = Module"]
    body.append("        with R.dataflow():")
    prev = "x"
    for k in range(m):
        body.append(f"            lv{k} = R.call_tir(cls.add{k}, ({prev}, y), out_ty={ann})")
        prev = f"lv{k}"
    body += [f"            gv: {ann} = {prev}", "            R.output(gv)", "        return gv"]
    return "\n".join(out + body) + "\n"


def best_of(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def measure(label: str, text: str, repeat: int) -> None:
    lines = text.count("\n")
    mod = tvmlite.parse(text)
    parse_s = best_of(lambda: tvmlite.parse(text), repeat)
    print_s = best_of(mod.script, repeat)
    print(f"{label}: {lines} lines")
    print(f"  tvmlite parse {parse_s * 1e3:9.1f} ms  {lines / parse_s:11,.0f} lines/s")
    print(f"  tvmlite print {print_s * 1e3:9.1f} ms  {lines / print_s:11,.0f} lines/s")
    try:
        import tvm  # noqa: F401 - the reference, only when installed
        from tvm.script import from_source
    except ImportError:
        print("  (apache-tvm not installed: no TVM ratio)")
        return
    tvm_mod = from_source(text)
    tvm_parse = best_of(lambda: from_source(text), 1)
    tvm_print = best_of(tvm_mod.script, repeat)
    faster = tvm_parse / parse_s
    share = print_s / tvm_print
    print(f"  TVM     parse {tvm_parse * 1e3:9.1f} ms  -> tvmlite is {faster:6.1f}x faster")
    print(f"  TVM     print {tvm_print * 1e3:9.1f} ms  -> tvmlite takes {share:6.2f}x TVM's time")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bindings", type=int, default=4000)
    ap.add_argument("--funcs", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    label_a = f"(a) Relax function, {args.bindings} bindings"
    measure(label_a, relax_chain(args.bindings), args.repeat)
    measure(f"(b) {args.funcs} legalized prim functions", legalized_module(args.funcs), args.repeat)


if __name__ == "__main__":
    main()
