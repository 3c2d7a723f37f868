"""Calls of TVM 0.27's `T.*` builtins as TVM itself parses and prints them: writes
tests/unit/data/tvm_builtin_calls.json, which tests/unit/test_builtin_tables.py holds
tvmlite's builtin tables to (its parse, print and result type of every entry).

    python tools/tvm_builtin_calls.py      # needs TVM 0.27 (only this script imports it)

For every call-level name in docs/tvm-coverage.md's `T` namespaces, the calls in
PREFERRED and CANDIDATES are tried in order as a statement of one prim function; the
first TVM parses is kept, as TVM prints it, with the result type TVM gives the call
("" for a statement: a void call, a tile operator). A name no candidate suits
is listed under "unsampled" with TVM's last error.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_SCOPES = ("tile", "cta", "wg", "warp", "warpgroup", "thread", "cluster")
OUT = ROOT / "tests" / "unit" / "data" / "tvm_builtin_calls.json"

HEADER = (  # as TVM 0.27 prints it
    "# from tvm.script import ir as I\n# from tvm.script import tirx as T\n"
    "# from tvm.tirx.layout import Axis\n\n"
)
PARAMS = (
    'A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "int32"), x: T.float32, '
    "y: T.float32, z: T.float32, n: T.int32, m: T.int32, k: T.int32, u: T.uint32, "
    'h: T.handle, b: T.bool, U: T.Buffer((16,), "uint32")'
)
# Argument lists tried in order; the first TVM accepts for a name is its sample.
CANDIDATES = (
    "x", "n", "x, y", "n, m", "x, y, z", "n, m, k", "b", "()", "u", "h", "A.data",
    "A[0]", "n, x", "b, x, y", '"int32", n', '"float32", x', '"float32x4", x',
    '"handle", "f", n', '"int32", "f", n', '"f", n', "A.data, n", "u, x, n, n",
    "u, n, n, n", "x, n", "T.uint32(4294967295), x, n, 32", "n, n, m, m, n, n, n",
    "A.data, 0, 4", '"float32", A.data, 0, 16, 1', "h, 0, 1", "h, 0, 1, n",
    "h, 0, 1, \"int32\"", "B.data, 0, B.data, 0, 4", "n, n, n, n", "x, x, x, x",
)  # fmt: skip
# Calls tried first for names whose meaningful arguments no candidate above gives (an
# integer operand, a bool condition, a callee name, a device intrinsic's own operands).
PREFERRED = {
    "T.clz": "n", "T.popcount": "n", "T.assume": "b", "T.likely": "b",
    "T.shift_left": "n, m", "T.shift_right": "n, m", "T.bitwise_and": "n, m",
    "T.bitwise_or": "n, m", "T.bitwise_xor": "n, m", "T.bitwise_not": "n",
    "T.truncdiv": "n, m", "T.truncmod": "n, m", "T.floordiv": "n, m", "T.floormod": "n, m",
    "T.call_extern": '"int32", "f", n', "T.call_pure_extern": '"float32", "g", x',
    "T.call_intrin": '"int32", "tirx.popcount", n', "T.call_packed": '"f", n',
    "T.call_llvm_intrin": '"int32", "llvm.ctpop", n',
    "T.call_llvm_pure_intrin": '"int32", "llvm.ctpop", n',
    "T.q_multiply_shift": "n, m, 31, k",
    "T.q_multiply_shift_per_axis": "n, m, k, k, 31, T.bool(True), T.bool(False)",
    "T.ptx_legacy.ldmatrix": 'T.bool(False), 4, ".b16", h, 0, h, 0',
    "T.ptx_legacy.mma": '"m16n8k8", "row", "col", "float16", "float16", "float16", h, 0, '
    "h, 0, h, 0, T.bool(False)",
    "T.Select": "b, x, y", "T.if_then_else": "b, x, y", "T.Not": "b", "T.And": "b, b",
    "T.Or": "b, b", "T.Cast": '"int32", x', "T.Ramp": "n, 1, 4", "T.Broadcast": "x, 4",
    "T.Shuffle": "[T.Broadcast(x, 2)], [0, 1]", "T.Let": "n + 1, where={k: m}",
    "T.Mod": "n, m", "T.FloorDiv": "n, m", "T.FloorMod": "n, m", "T.Div": "n, m",
    "T.tvm_struct_get": 'h, 0, 3, "int64"', "T.tvm_struct_set": "h, 0, 1, n",
    "T.tvm_stack_alloca": '"array", 3', "T.cuda.mov_sreg": '32, "clusterid.x"',
    "T.s_tir.cp_async_raw": '"float32", A.data, n, A.data, n, 4',
    "T.prefetch": "T.address_of(A[0]), 0, 3, 1",
    "T.tvm_thread_allreduce": "T.uint32(1), A[0], T.bool(True), A[1], n",
    "T.cast": 'x, "int32"', "T.type_annotation": '"float16"', "T.max_value": '"float32"',
    "T.min_value": '"int32"', "T.infinity": '"float32"',
    "T.tvm_warp_shuffle": "T.uint32(4294967295), x, 0, 32, 32",
    "T.tvm_warp_shuffle_up": "T.uint32(4294967295), x, 1, 32, 32",
    "T.tvm_warp_shuffle_down": "T.uint32(4294967295), x, 1, 32, 32",
    "T.tvm_fill_fragment": "A.data, 16, 16, 16, 0, x",
    "T.tvm_load_matrix_sync": 'A.data, 16, 16, 16, 0, T.tvm_access_ptr(T.type_annotation('
    '"float16"), B.data, 0, 256, 1), 16, "row_major"',
    "T.tvm_store_matrix_sync": 'A.data, 16, 16, 16, 0, T.tvm_access_ptr(T.type_annotation('
    '"float16"), B.data, 0, 256, 2), 16, "row_major"',
    "T.tvm_mma_sync": "A.data, 0, B.data, 0, B.data, 0, A.data, 0",
    "T.tvm_bmma_sync": "A.data, 0, B.data, 0, B.data, 0, A.data, 0",
    "T.tvm_stack_make_array": "A.data, T.tvm_stack_make_shape(16), 0, 1, T.float32(0.0), 0",
    "T.cuda.ldg": 'A.data, "float32"',
    "T.cuda.mma_fill": '"float32", 8, A.data, 0',
    "T.cuda.mma_store": '"float32", 16, 16, A.data, B.data, 0, 16',
    "T.tvm_warp_shuffle_xor": "u, x, 1, 32, 32",
    "T.metal.simdgroup_multiply_accumulate": "A.data, 0, B.data, 0, B.data, 0, A.data, 0",
    "T.print_buffer": 'A.data, "float32", T.bool(False), T.bool(False), T.uint32(2), 16',
    "T.ptx.add": 'A[0], x, y, "rn", "", "", "f32", "", ""',
    "T.ptx.sub": 'A[0], x, y, "rn", "", "", "f32", "", ""',
    "T.ptx.mul": 'A[0], x, y, "rn", "", "", "f32", ""',
    "T.ptx.fma": 'A[0], x, y, z, "rn", "", "", "f32", "", ""',
    "T.ptx.max": 'A[0], x, y, "", "", "", "", "", "f32", ""',
    "T.ptx.neg": 'A[0], x, "", "f32", ""',
    "T.ptx.ld": 'B[0], B.data, "", "acquire", "gpu", "global", "", "", "", "", "", "s32", ""',
    "T.ptx.mapa": 'U[0], u, T.uint32(1), "shared::cluster", "u32", ""',
    "T.reinterpret": '"float32", n', "T.cuda.mma_fill_legacy": '"float32", 8, A.data, 0',
    "T.cuda.mma_store_legacy": '"float32", 16, 16, T.tvm_access_ptr(T.type_annotation('
    '"float32"), A.data, 0, 16, 2), B.data, 0, 16',
    "T.ptx.mbarrier": 'u, T.uint32(16), "complete_tx", "", "", "shared", "b64", ""',
    "T.ptx.cp": '"async", "bulk", "commit_group", ""',
    "T.ptx.fence": '"proxy", "async", "shared::cta", ""',
    "T.ptx.griddepcontrol": '"launch_dependents", ""',
    "T.ptx.wgmma": '"commit_group", "sync", "aligned", ""',
    "T.ptx.st_bulk": 'A.data, n, "", "", ""',  # the printed form: modifier slots as strings
    "T.ptx.clusterlaunchcontrol": 'u, u, "try_cancel", "async", "shared::cta", '
    '"mbarrier::complete_tx::bytes", "", "b128", ""',
    "T.cuda.func_call": '"f", n, source_code="__device__ int f(int n) {\\n  return n;\\n}\\n", '
    'return_type="int32"',
}  # fmt: skip
# Names TVM takes only as an operand of another call: the whole statement sampled.
STATEMENTS = {
    "T.ptx.addr": 'T.ptx.st(T.ptx.addr(U.data, 16), u, "", "", "", "global", "", "", "", '
    '"b32", "")',
}  # fmt: skip
# Tile operators take buffer regions, under any scope (`T.tile.add`, `T.cta.add`).
TILE_PREFERRED = {
    "add": "A[0:4], A[4:8], A[8:12]", "sub": "A[0:4], A[4:8], A[8:12]",
    "mul": "A[0:4], A[4:8], A[8:12]", "fdiv": "A[0:4], A[4:8], A[8:12]",
    "maximum": "A[0:4], A[4:8], A[8:12]", "minimum": "A[0:4], A[4:8], A[8:12]",
    "fma": "A[0:4], A[4:8], A[8:12], A[12:16]", "copy": "A[0:4], A[4:8]",
    "copy_async": "A[0:4], A[4:8]", "cast": "A[0:4], B[0:4]", "exp": "A[0:4], A[4:8]",
    "exp2": "A[0:4], A[4:8]", "log2": "A[0:4], A[4:8]", "sqrt": "A[0:4], A[4:8]",
    "reciprocal": "A[0:4], A[4:8]", "silu": "A[0:4], A[4:8]", "fill": "A[0:4], x",
    "memset": "A[0:4], x", "zero": "A[0:4]", "sum": "A[0:1], A[0:4], [-1], False",
    "max": "A[0:1], A[0:4], [-1], False", "min": "A[0:1], A[0:4], [-1], False",
    "gemm": "A[0:4], A[0:4], A[0:4], A[0:4], False, False, T.float32(1.0), T.float32(0.0)",
    "select": "A[0:4], A[4:8], A[8:12], lambda i: i < 2",
    "gemm_async": "A[0:4], A[4:8], A[8:12]",
    "permute_layout": "A[0:4], A[4:8]",
    # as TVM's API takes them: TVM keeps (and prints) the operators as `I.Op(...)`
    "binary_chain": 'A[0:4], A[4:8], A[8:12], x, "add", "mul"',
    "binary_reduce": 'A[0:4], A[4:5], A[8:12], A[12:16], "add", "max"',
    "unary_reduce": 'A[0:4], A[4:5], A[8:12], "exp", "sum", bias=x, scale=y',
    "reduce_negate": 'A[0:1], A[4:8], "max"',
}  # fmt: skip
# Names a prim function does not take as an expression (statements, frames, types).
NOT_CALLS = frozenset(
    {
        "prim_func", "Buffer", "match_buffer", "alloc_buffer", "decl_buffer", "sblock",
        "sblock_alloc_buffer", "sblock_attr", "init", "grid", "serial", "parallel",
        "vectorized", "unroll", "thread_binding", "attr", "func_attr", "reads", "writes",
        "where", "evaluate", "launch_thread", "env_thread", "bind", "axis", "hint",
        "target", "comm_reducer", "alloc_local", "alloc_shared", "smem", "tmem",
        "alloc_scalar", "local_scalar", "shared_scalar", "decl_scalar", "TensorMap",
        "TileLayout", "ComposeLayout", "S", "R", "handle", "void", "Ptr", "ptr",
        "break_loop", "continue_loop",
    }
)  # fmt: skip


def names_to_sample() -> list[str]:
    sys.path.insert(0, str(ROOT / "tools"))
    import tvm_coverage

    table = tvm_coverage.read_page(tvm_coverage.PAGE.read_text())
    found = []
    for space, kinds in table.items():
        if not space.startswith("T") or space == "T.axis":
            continue
        for name in kinds["parsed"]:
            qualified = f"{space}.{name}"
            why = tvm_coverage.reason(space, name, False)
            python_only = why in tvm_coverage.BY_DESIGN and why != tvm_coverage.NODE_CLASS
            if name in NOT_CALLS or python_only:
                continue
            if space == "T" and _is_dtype(name):
                continue
            found.append(qualified)
    return found


def _is_dtype(name: str) -> bool:
    import tvm

    try:
        tvm.DataType(name)
    except Exception:  # noqa: BLE001
        return name in ("bf16", "f16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16",
                        "u32", "u64")  # fmt: skip
    return True


def sample(qualified: str) -> dict[str, str] | str:
    import tvm

    error = "no candidate"
    space, _, name = qualified.rpartition(".")
    preferred = PREFERRED.get(qualified)
    if preferred is None and space.removeprefix("T.") in _SCOPES:
        preferred = TILE_PREFERRED.get(name)
    first = () if preferred is None else (preferred,)
    statement = STATEMENTS.get(qualified)
    for args in (*first, *CANDIDATES) if statement is None else (statement,):
        call = statement or f"{qualified}({'' if args == '()' else args})"
        text = f"{HEADER}@T.prim_func\ndef f({PARAMS}):\n    {call}\n"
        try:
            mod = tvm.script.from_source(text, check_well_formed=False)
            printed = mod.script()
        except Exception as e:  # noqa: BLE001  (TVM's parser refuses this argument list)
            lines = [ln for ln in str(e).splitlines() if "error" in ln.lower()]
            error = (lines[-1] if lines else str(e).strip().splitlines()[-1]).strip()[:200]
            continue
        kind = type(mod.body).__name__
        if kind not in ("Evaluate", "TilePrimitiveCall"):
            return f"not a call statement: TVM builds a {kind}"
        body = printed.strip().splitlines()[-1].strip()
        found = {"call": call, "printed": body, "type": _type_of(mod.body)}
        try:  # what TVM makes of its own print (None: it cannot parse it back)
            again = tvm.script.from_source(printed, check_well_formed=False).body
            found["reparsed_type"] = _type_of(again)
        except Exception:  # noqa: BLE001
            found["reparsed_type"] = None
        return found
    return error


def _type_of(stmt: object) -> str:
    return str(stmt.value.ty) if type(stmt).__name__ == "Evaluate" else ""


def main() -> int:
    samples, unsampled = {}, {}
    for qualified in names_to_sample():
        found = sample(qualified)
        if isinstance(found, dict):
            samples[qualified] = found
        else:
            unsampled[qualified] = found
    doc = {"header": HEADER, "params": PARAMS, "samples": samples, "unsampled": unsampled}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}: {len(samples)} sampled, {len(unsampled)} not")
    return 0


if __name__ == "__main__":
    sys.exit(main())
