"""Shape rules as TVM states them: Relax operators swept over ranks, layouts, dtypes
and symbolic dims, TVM's inferred struct info against tvmlite's.

    python tools/tvm_shape_rules.py record OUT.json    # the Python with TVM 0.27
    python tools/tvm_shape_rules.py check OUT.json     # the Python with tvmlite

`record` builds every case in TVM: parameters of the given struct info, one call of
`relax.op.*` emitted through a `BlockBuilder` (which normalizes it: TVM's struct-info
rule runs), the module printed by TVM. A case TVM refuses keeps TVM's message, and its
text is TVM's printed header with the call written out. `check` parses each text with
tvmlite, the call's annotation left out so that tvmlite infers it, and compares the
struct info tvmlite prints for the call with TVM's (shape, dtype, ndim, as text);
where TVM refuses, tvmlite must refuse with a located error. It prints the
disagreements grouped by operator and a summary line.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# An input: (shape, dtype); a shape is a tuple of ints and symbolic names (int64 vars),
# or an int (the rank of a tensor whose shape is unknown), or None (rank unknown too).
Input = tuple[Any, str]


@dataclass
class Case:
    op: str  # relax.op.<op>, e.g. "nn.conv2d"
    inputs: list[Input]
    kwargs: dict[str, Any] = field(default_factory=dict)
    args: list[Any] = field(default_factory=list)  # literal arguments after the tensors
    packed: bool = False  # the tensors go in as one tuple (`R.concat((x0, x1))`)


# ------------------------------------------------------------------ the sweep

F32 = "float32"


def _conv_cases() -> Iterator[Case]:
    spatial = {1: "W", 2: "HW", 3: "DHW"}
    sizes = {1: (10,), 2: (10, 9), 3: (6, 7, 8)}
    for n in (1, 2, 3):
        sp = spatial[n]
        sz = sizes[n]
        data_layouts = ["NC" + sp, "N" + sp + "C", "C" + sp + "N"]
        kernel_layouts = ["OI" + sp, sp + "IO", "O" + sp + "I", "IO" + sp]
        for transpose in (False, True):
            op = f"nn.conv{n}d" + ("_transpose" if transpose else "")
            for dl, kl in itertools.product(data_layouts, kernel_layouts):
                for ol in (None, "NC" + sp, "N" + sp + "C"):
                    dims = {"N": 2, "C": 4, **dict(zip(sp, sz, strict=True))}
                    kdims = (
                        {"O": 4, "I": 6, **dict.fromkeys(sp, 3)}
                        if transpose
                        else {"O": 6, "I": 4, **dict.fromkeys(sp, 3)}
                    )
                    data = tuple(dims[a] for a in dl)
                    weight = tuple(kdims[a] for a in kl)
                    kw: dict[str, Any] = {"data_layout": dl, "kernel_layout": kl}
                    if ol is not None:
                        kw["out_layout"] = ol
                    yield Case(op, [(data, F32), (weight, F32)], kw)
            # strides, padding, dilation, groups, symbolic dims, dtypes, refusals
            base_d = (2, 4, *sz)
            base_w = (4, 6, *(3,) * n) if transpose else (6, 4, *(3,) * n)
            kl0 = ("IO" if transpose else "OI") + sp
            for strides, padding, dilation in itertools.product((1, 2), (0, 1, 2 * n), (1, 2)):
                kw = {
                    "strides": [strides] * n,
                    "padding": [1] * (2 * n) if padding == 2 * n else padding,
                    "dilation": [dilation] * n,
                }
                if transpose and strides == 2:
                    kw["output_padding"] = [1] * n
                yield Case(op, [(base_d, F32), (base_w, F32)], kw)
            groups_w = (4, 3, *(3,) * n) if transpose else (6, 2, *(3,) * n)
            yield Case(op, [(base_d, F32), (groups_w, F32)], {"groups": 2})
            sym = ("n", 4, *(f"s{i}" for i in range(n)))
            yield Case(op, [(sym, F32), (base_w, F32)], {})
            yield Case(op, [(sym, F32), (base_w, F32)], {"strides": [2] * n, "padding": [1] * n})
            yield Case(op, [(("n", "c", *sz), F32), (base_w, F32)], {})
            yield Case(op, [(n + 2, F32), (base_w, F32)], {})
            yield Case(op, [(None, F32), (base_w, F32)], {})
            yield Case(op, [(base_d, "float16"), (base_w, "float16")], {})
            yield Case(op, [(base_d, "float16"), (base_w, "float16")], {"out_dtype": F32})
            yield Case(op, [(base_d, "int8"), (base_w, "int8")], {"out_dtype": "int32"})
            yield Case(op, [(base_d, F32), (base_w, "float16")], {})
            yield Case(op, [(base_d, "bool"), (base_w, F32)], {})
            yield Case(op, [(base_d, "void"), (base_w, F32)], {})
            yield Case(op, [((2, 5, *sz), F32), (base_w, F32)], {})  # channels differ
            yield Case(op, [((2, 4, *sz, 1), F32), (base_w, F32)], {})  # rank
            yield Case(op, [(base_d, F32), (base_w, F32)], {"data_layout": "NC" + sp[:-1]})
            yield Case(op, [(base_d, F32), (base_w, F32)], {"kernel_layout": "OI" + sp[:-1]})
            yield Case(op, [(base_d, F32), (base_w, F32)], {"out_layout": sp + "CN"})
            # packed layouts: NCHW4c data, OIHW4o kernels
            packed_d = (2, 1, *sz, 4)
            if not transpose:
                yield Case(
                    op,
                    [(packed_d, F32), ((2, 4, *(3,) * n, 4), F32)],
                    {"data_layout": "NC" + sp + "4c", "kernel_layout": "OI" + sp + "4o",
                     "out_layout": "NC" + sp + "4c"},
                )  # fmt: skip
                yield Case(
                    op,
                    [(packed_d, F32), ((8, 4, *(3,) * n), F32)],
                    {"data_layout": "NC" + sp + "4c", "kernel_layout": kl0},
                )
                yield Case(
                    op,
                    [(base_d, F32), (base_w, F32)],
                    {"out_layout": "NC" + sp + "2c"},
                )
                yield Case(
                    op,
                    [(base_d, F32), ((6, 4, *(3,) * n), F32)],
                    {"out_layout": "NC" + sp + "4c"},
                )
                yield Case(
                    op,
                    [((2, 1, *sz, 3), F32), ((2, 4, *(3,) * n, 4), F32)],
                    {"data_layout": "NC" + sp + "4c", "kernel_layout": "OI" + sp + "4o"},
                )


def _pool_cases() -> Iterator[Case]:
    spatial = {1: "W", 2: "HW", 3: "DHW"}
    sizes = {1: (10,), 2: (10, 9), 3: (6, 7, 8)}
    for n in (1, 2, 3):
        sp = spatial[n]
        sz = sizes[n]
        for kind in ("max", "avg"):
            op = f"nn.{kind}_pool{n}d"
            for layout in ("NC" + sp, "N" + sp + "C", "NC" + sp + "8c"):
                dims = {"N": 2, "C": 3, **dict(zip(sp, sz, strict=True)), "8c": 8}
                axes = re.findall(r"[0-9]+[a-z]|[A-Z]", layout)
                data = tuple(dims[a] for a in axes)
                for pool, stride, pad, ceil in itertools.product(
                    (2, 3), (1, 2), (0, 1), (False, True)
                ):
                    kw = {
                        "pool_size": [pool] * n,
                        "strides": [stride] * n,
                        "padding": [pad] * (2 * n),
                        "ceil_mode": ceil,
                        "layout": layout,
                    }
                    yield Case(op, [(data, F32)], kw)
                yield Case(op, [(data, F32)], {"layout": layout, "out_layout": "NC" + sp})
            sym = ("n", "c", *(f"s{i}" for i in range(n)))
            for ceil in (False, True):
                yield Case(op, [(sym, F32)], {"pool_size": [2] * n, "strides": [2] * n,
                                              "ceil_mode": ceil})  # fmt: skip
            yield Case(op, [((2, 3, *sz), F32)], {"pool_size": [3] * n, "dilation": [2] * n})
            yield Case(op, [((2, 3, *sz), F32)], {"pool_size": [20] * n})  # window > data
            yield Case(op, [((2, 3, *sz), "int8")], {"pool_size": [2] * n})
            yield Case(op, [(n + 2, F32)], {"pool_size": [2] * n})
            yield Case(op, [(n + 3, F32)], {"pool_size": [2] * n})
            yield Case(op, [(None, F32)], {"pool_size": [2] * n})
            yield Case(op, [((2, 3, *sz), F32)], {"layout": "NC"})
        op = f"nn.adaptive_avg_pool{n}d"
        for layout in ("NC" + sp, "N" + sp + "C", "NC" + sp + "8c"):
            dims = {"N": 2, "C": 3, **dict(zip(sp, sz, strict=True)), "8c": 8}
            axes = re.findall(r"[0-9]+[a-z]|[A-Z]", layout)
            data = tuple(dims[a] for a in axes)
            yield Case(op, [(data, F32)], {"layout": layout})
            yield Case(op, [(data, F32)], {"output_size": [2] * n, "layout": layout})
            yield Case(op, [(data, F32)], {"output_size": [2] * n, "layout": layout,
                                           "out_layout": "NC" + sp})  # fmt: skip
        yield Case(op, [(("n", "c", *(f"s{i}" for i in range(n))), F32)], {"output_size": [1] * n})
        yield Case(op, [(n + 2, F32)], {"output_size": [1] * n})
        yield Case(op, [(n + 1, F32)], {})


def _resize_cases() -> Iterator[Case]:
    for n, op in ((2, "image.resize2d"), (3, "image.resize3d")):
        sp = "HW" if n == 2 else "DHW"
        sz = (10, 9) if n == 2 else (6, 7, 8)
        for layout in ("NC" + sp, "N" + sp + "C", "NC" + sp + "4c"):
            dims = {"N": 2, "C": 3, **dict(zip(sp, sz, strict=True)), "4c": 4}
            axes = re.findall(r"[0-9]+[a-z]|[A-Z]", layout)
            data = tuple(dims[a] for a in axes)
            yield Case(op, [(data, F32)], {"layout": layout}, args=[[5] * n])
            yield Case(op, [(data, F32)], {"layout": layout, "out_dtype": "float16"},
                       args=[[5] * n])  # fmt: skip
        yield Case(op, [(("n", "c", *sz), F32)], {}, args=[[4] * n])
        yield Case(op, [((2, 3, *sz), "int8")], {}, args=[[4] * n])
        yield Case(op, [(n + 2, F32)], {}, args=[[4] * n])
        yield Case(op, [(n + 1, F32)], {}, args=[[4] * n])
        yield Case(op, [((2, 3, *sz), F32)], {}, args=[[4] * (n + 1)])


def _reduce_cases() -> Iterator[Case]:
    shapes = [(2, 3, 4), ("n", 3, "m"), (5,), 3, None]
    axes: list[Any] = [None, 0, -1, [0, 2], [1], [], [3], [0, 0], [-4]]
    for op in ("sum", "mean", "max", "min", "prod", "std", "variance", "median"):
        for shape, axis, keep in itertools.product(shapes, axes, (False, True)):
            kw: dict[str, Any] = {"keepdims": keep}
            if axis is not None:
                kw["axis"] = axis
            yield Case(op, [(shape, F32)], kw)
    for op in ("argmax", "argmin"):
        for shape, axis, keep in itertools.product(shapes, (None, 0, -1, 3), (False, True)):
            kw = {"keepdims": keep}
            if axis is not None:
                kw["axis"] = axis
            yield Case(op, [(shape, F32)], kw)
    for op in ("cumsum", "cumprod"):
        for shape, axis in itertools.product(shapes, (None, 0, -1, 3)):
            kw = {} if axis is None else {"axis": axis}
            yield Case(op, [(shape, "int32")], kw)
            yield Case(op, [(shape, "int32")], {**kw, "dtype": "int64"})
    for dtype in ("int32", "bool", "float16"):
        yield Case("sum", [((2, 3), dtype)], {"axis": [1]})
        yield Case("mean", [((2, 3), dtype)], {"axis": [1]})


def _broadcast_cases() -> Iterator[Case]:
    shapes: list[Any] = [
        (2, 3), (3,), (1, 3), (2, 1), (4, 1, 3), ("n", 3), ("n", 1), (1, "n"), ("m", 3),
        ("n", "m"), (), 2, None, (4,), (2, 4),
    ]  # fmt: skip
    for a, b in itertools.product(shapes, shapes):
        yield Case("add", [(a, F32), (b, F32)], {})
    for a, b in itertools.product(((2, 3), ("n", 1), 2), ((3,), (1, "n"))):
        yield Case("less", [(a, F32), (b, F32)], {})
        yield Case("multiply", [(a, "int32"), (b, "int32")], {})
    for da, db in itertools.product((F32, "float16", "int32", "bool", "void"), repeat=2):
        yield Case("add", [((2, 3), da), ((3,), db)], {})
        yield Case("equal", [((2, 3), da), ((3,), db)], {})
    yield Case("where", [((2, 3), "bool"), ((2, 1), F32), ((3,), F32)], {})
    yield Case("where", [(("n", 1), "bool"), ((1, 3), F32), ((3,), F32)], {})
    yield Case("where", [((2, 3), "bool"), ((4,), F32), ((3,), F32)], {})
    yield Case("where", [((2, 3), F32), ((2, 3), F32), ((2, 3), F32)], {})


def _matmul_cases() -> Iterator[Case]:
    shapes: list[Any] = [
        (4,), (3, 4), (4, 5), (2, 3, 4), (2, 4, 5), (1, 4, 5), (7, 1, 3, 4), ("b", 3, 4),
        ("b", 4, 5), ("n", 4), (4, "k"), 3, None, (5,), (3, 5),
    ]  # fmt: skip
    for a, b in itertools.product(shapes, shapes):
        yield Case("matmul", [(a, F32), (b, F32)], {})
    yield Case("matmul", [((3, 4), "float16"), ((4, 5), "float16")], {"out_dtype": F32})
    yield Case("matmul", [((3, 4), "int8"), ((4, 5), "int8")], {"out_dtype": "int32"})
    yield Case("matmul", [((3, 4), F32), ((4, 5), "float16")], {})
    yield Case("matmul", [((3, 4), "void"), ((4, 5), F32)], {})
    yield Case("matmul", [((), F32), ((4, 5), F32)], {})


def _transpose_cases() -> Iterator[Case]:
    for shape, axes in itertools.product(
        [(2, 3, 4), ("n", 3, "m"), 3, None, (5,), ()],
        [None, [2, 0, 1], [0, 1], [1, 1, 0], [-1, 0, 1], [0]],
    ):
        kw = {} if axes is None else {"axes": axes}
        yield Case("permute_dims", [(shape, F32)], kw)


def _manipulate_cases() -> Iterator[Case]:
    shapes: list[Any] = [(2, 3, 4), ("n", 3, 1), (1, "m", 1), 3, None]
    for shape in shapes:
        for axis in (None, 0, [0, 2], -1, 3):
            kw = {} if axis is None else {"axis": axis}
            yield Case("squeeze", [(shape, F32)], kw)
        for axis in (0, -1, [0, 4], 4, [1, 1]):
            yield Case("expand_dims", [(shape, F32)], {"axis": axis})
        yield Case("flatten", [(shape, F32)], {})
        for indices in (2, [1, 2], 3):
            for axis in (0, 1, -1, 3):
                yield Case("split", [(shape, F32)], {"axis": axis}, args=[indices])
    pairs: list[Any] = [((2, 3), (2, 5)), (("n", 3), ("m", 3)), ((2, 3), 2), ((2, 3), (3, 3)),
                        ((2, 3), (2, 3, 1)), (None, (2, 3))]  # fmt: skip
    for (a, b), axis in itertools.product(pairs, (0, 1, -1, 2)):
        yield Case("concat", [(a, F32), (b, F32)], {"axis": axis}, packed=True)


SWEEP = {
    "conv": _conv_cases,
    "pool": _pool_cases,
    "resize": _resize_cases,
    "reduce": _reduce_cases,
    "broadcast": _broadcast_cases,
    "matmul": _matmul_cases,
    "transpose": _transpose_cases,
    "manipulate": _manipulate_cases,
}


# ------------------------------------------------------------------ record (TVM)


def _tvm_param(name: str, spec: Input, syms: dict[str, Any]) -> Any:
    from tvm import relax, tirx

    shape, dtype = spec
    dtype = "" if dtype == "void" else dtype
    if shape is None:
        ty = relax.TensorType(None, dtype or None, ndim=-1)
    elif isinstance(shape, int):
        ty = relax.TensorType(None, dtype or None, ndim=shape)
    else:
        dims = [d if isinstance(d, int) else syms.setdefault(d, tirx.Var(d, "int64"))
                for d in shape]  # fmt: skip
        ty = relax.TensorType(dims, dtype or None)
    return relax.Var(name, ty)


def _literal(value: Any) -> str:
    """`value` as TVMScript writes it (`[2, 2]`, `"NHWC"`, `None`)."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    return repr(value)


def _call_text(case: Case, names: list[str]) -> str:
    tensors = [f"({', '.join(names)})"] if case.packed else names
    parts = [*tensors, *(_literal(a) for a in case.args)]
    parts += [f"{k}={_literal(v)}" for k, v in case.kwargs.items()]
    return f"R.{case.op}({', '.join(parts)})"


def _record_case(case: Case) -> dict[str, Any]:
    import tvm
    from tvm import relax

    syms: dict[str, Any] = {}
    params = [_tvm_param(f"x{i}", spec, syms) for i, spec in enumerate(case.inputs)]
    fn = tvm.relax.op
    for part in case.op.split("."):
        fn = getattr(fn, part)
    out: dict[str, Any] = {"op": case.op, "call": _call_text(case, [p.name for p in params])}
    bb = relax.BlockBuilder()
    try:
        with bb.function("main", params):
            tensors = [relax.Tuple(params)] if case.packed else params
            lv = bb.emit(fn(*tensors, *case.args, **case.kwargs))
            bb.emit_func_output(lv)
        text = bb.get().script()
        out["tvm"] = _annotation(text)
        out["text"] = text
    except Exception as exc:  # noqa: BLE001  (TVM refuses: keep its reason)
        out["tvm"] = None
        out["reason"] = str(exc).strip().splitlines()[-1][:300]
        header = relax.BlockBuilder()
        with header.function("main", params):
            header.emit_func_output(params[0])
        text = header.get().script()
        out["text"] = re.sub(
            r"^(\s*)return x0$", lambda m: f"{m[1]}lv = {out['call']}\n{m[1]}return lv",
            text, flags=re.M,
        )  # fmt: skip
    return out


_BINDING = re.compile(r"^(\s*)(\w+): (.*?) = (R\..*)$", re.M)  # the call's binding


def _annotation(text: str) -> str | None:
    found = _BINDING.search(text)
    return found[3] if found else None


def record(out: Path, only: str) -> int:
    import tvm  # noqa: F401

    cases = []
    for family, gen in SWEEP.items():
        if only and only != family:
            continue
        for case in gen():
            got = _record_case(case)
            got["family"] = family
            cases.append(got)
    out.write_text(json.dumps(cases, indent=1))
    refused = sum(c["tvm"] is None for c in cases)
    print(f"record: {len(cases)} cases, TVM infers {len(cases) - refused}, refuses {refused}")
    return 0


# ------------------------------------------------------------------ check (tvmlite)


def _tvmlite_side(tvmlite: Any, text: str) -> tuple[str | None, str | None]:
    """(the annotation tvmlite prints for the call, None) or (None, its error)."""
    text = _BINDING.sub(r"\1\2 = \4", text)
    text = re.sub(r"\) -> .*:$", "):", text, flags=re.M)  # let tvmlite infer the return too
    try:
        mod = tvmlite.parse(text, check_well_formed=False)  # the build checks the rest
    except tvmlite.TVMLiteError as exc:
        return None, str(exc)
    return _annotation(mod.script()), None


def check(path: Path, only: str, show: int) -> int:
    import tvmlite

    cases = [c for c in json.loads(path.read_text()) if not only or c["family"] == only]
    agree = 0
    misses: dict[str, list[str]] = collections.defaultdict(list)
    families = collections.Counter()
    family_ok = collections.Counter()
    for case in cases:
        families[case["family"]] += 1
        try:
            got, error = _tvmlite_side(tvmlite, case["text"])
        except Exception as exc:  # noqa: BLE001
            got, error = None, f"INTERNAL {type(exc).__name__}: {exc}"
        want = case["tvm"]
        if error is not None and error.startswith("INTERNAL"):
            why = error[:200]
        elif want is None and error is not None:
            why = None if re.search(r":\d+:\d+: error:", error) else "refused without a location"
        elif want is None:
            why = f"TVM refuses ({case['reason'][:160]}), tvmlite infers {got}"
        elif error is not None:
            why = f"TVM infers {want}, tvmlite refuses: {error.splitlines()[0][:200]}"
        elif got != want:
            why = f"TVM infers {want}, tvmlite {got}"
        else:
            why = None
        if why is None:
            agree += 1
            family_ok[case["family"]] += 1
        else:
            misses[case["op"]].append(f"{case['call']}\n        {why}")
    for op, items in sorted(misses.items(), key=lambda kv: -len(kv[1])):
        print(f"{len(items):4d}  {op}")
        for item in items[:show]:
            print(f"      {item}")
    for family, n in families.items():
        print(f"  {family:10s} {family_ok[family]:4d}/{n}")
    print(f"shape rules: tvmlite agrees with TVM on {agree}/{len(cases)} cases "
          f"({100 * agree / max(len(cases), 1):.1f} %)")  # fmt: skip
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("step", choices=["record", "check"])
    ap.add_argument("path", type=Path)
    ap.add_argument("--only", default="", help="one family: " + ", ".join(SWEEP))
    ap.add_argument("--show", type=int, default=5)
    args = ap.parse_args()
    if args.step == "record":
        return record(args.path, args.only)
    return check(args.path, args.only, args.show)


if __name__ == "__main__":
    sys.exit(main())
