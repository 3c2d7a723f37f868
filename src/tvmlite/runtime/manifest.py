"""The manifest every compiled module carries (JSON; `PREFIX_manifest` in a library):
its ABI version, its graph functions with their entry symbols and signatures,
and the packed functions it calls (docs/abi.md).

A loader of a `.so` has no IR, only the manifest; the signature of every
entry travels there so that `tvmlite.load_module` can flatten and check Python
arguments exactly as `build()` does, `tvms run --random` can draw inputs, and
the C header can document each argument. Dims are ints, symbolic variables
(`{"var": "n"}`), or other expressions (`{"expr": "n * 2"}`, shown but never
solved by the loader: the native entry checks them). A function whose
signature a fast-call wrapper serves (`fastcall.py`) names that wrapper too (or
its record, in a module of many functions served by one wrapper).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tvmlite.diagnostics import TVMLiteError
from tvmlite.dsl import relax, tir
from tvmlite.runtime.abi import entry_symbol, fastcall_symbol, leaves

ABI_VERSION = 1


def dim_to_json(e: tir.PrimExpr) -> Any:
    if isinstance(e, tir.IntImm):
        return e.value
    if isinstance(e, tir.Var):
        return {"var": e.name, "dtype": e.dtype}
    return {"expr": _expr_text(e)}


def _expr_text(e: tir.PrimExpr) -> str:
    try:
        from tvmlite.printer import script

        return script(e).strip()
    except Exception:  # noqa: BLE001 - display text only; never fail an export on it
        return type(e).__name__


def sinfo_to_json(s: relax.StructInfo) -> dict[str, Any]:
    if isinstance(s, relax.TupleStructInfo):
        return {"kind": "tuple", "fields": [sinfo_to_json(f) for f in s.fields]}
    if isinstance(s, relax.TensorStructInfo):
        shape = None
        if isinstance(s.shape, tuple):
            shape = [dim_to_json(d) for d in s.shape]
        return {"kind": "tensor", "dtype": s.dtype, "ndim": s.ndim, "shape": shape}
    if isinstance(s, relax.PrimStructInfo):
        return {"kind": "prim", "dtype": s.dtype}
    if isinstance(s, relax.ShapeStructInfo):
        values = None if s.values is None else [dim_to_json(d) for d in s.values]
        return {"kind": "shape", "ndim": s.ndim, "values": values}
    return {"kind": "object"}


def sinfo_from_json(data: Mapping[str, Any], names: dict[str, tir.Var]) -> relax.StructInfo:
    """The inverse of `sinfo_to_json`; `names` shares one tir.Var per symbolic name."""
    kind = data.get("kind")
    if kind == "tuple":
        return relax.TupleStructInfo(tuple(sinfo_from_json(f, names) for f in data["fields"]))
    if kind == "tensor":
        shape = data.get("shape")
        dims = None if shape is None else tuple(_dim_from_json(d, names) for d in shape)
        return relax.TensorStructInfo(shape=dims, dtype=data["dtype"], ndim=data["ndim"])
    if kind == "prim":
        return relax.PrimStructInfo(data["dtype"])
    if kind == "shape":
        values = data.get("values")
        vals = None if values is None else tuple(_dim_from_json(d, names) for d in values)
        return relax.ShapeStructInfo(values=vals, ndim=data["ndim"])
    if kind == "object":
        return relax.ObjectStructInfo()
    raise TVMLiteError(f"the library's manifest has an unknown struct info kind {kind!r}")


def _dim_from_json(d: Any, names: dict[str, tir.Var]) -> tir.PrimExpr:
    if isinstance(d, int):
        return tir.IntImm("int64", d)
    if "var" in d:
        name = d["var"]
        if name not in names:
            names[name] = tir.Var(name, d.get("dtype", "int64"))
        return names[name]
    # An expression the loader cannot solve: an anonymous var, checked natively.
    return tir.Var(d.get("expr", "?"), "int64")


def function_info(
    name: str, func: relax.Function, fast: Mapping[str, Any], written: frozenset[int]
) -> dict[str, Any]:
    """One function's manifest record (`symbol`, `params`, `num_outputs` are the
    ABI-1 keys; `signature` and `public` let a loader rebuild the callable, the
    signature's `written`, when present, lists the parameters an in-place call
    writes; `fast` says which CPython wrapper serves it: `fastcall`, the symbol
    of its own, or `fastcall_record`, the index of its record for the module's
    shared one; none when the Python path does; `num_input`, TVM's attribute,
    how many leading parameters are data, the others being weights)."""
    info = {
        "symbol": entry_symbol(name),
        "params": [leaf.label for p in func.params for leaf in leaves(p.struct_info, p.name)],
        "num_outputs": len(leaves(func.ret_struct_info, "result")),
        "public": func.attr("global_symbol") is not None,
        "signature": {
            "params": [[p.name, sinfo_to_json(p.struct_info)] for p in func.params],
            "ret": sinfo_to_json(func.ret_struct_info),
        },
    }
    if written:
        info["signature"]["written"] = sorted(written)
    num_input = func.attr("num_input")
    if type(num_input) is int and 0 <= num_input <= len(func.params):
        info["num_input"] = num_input  # the leading parameters that are data, not weights
    return {**info, **fast}


def signature_from_info(info: Mapping[str, Any]) -> tuple[list[relax.Var], relax.StructInfo]:
    """Parameters (as relax Vars) and the return struct info of a manifest record."""
    sig = info.get("signature")
    if not isinstance(sig, Mapping):
        raise TVMLiteError("the library's manifest has no signatures (built by an older tvmlite)")
    names: dict[str, tir.Var] = {}
    params = [relax.Var(name, sinfo_from_json(s, names)) for name, s in sig["params"]]
    return params, sinfo_from_json(sig["ret"], names)


def written_from_info(info: Mapping[str, Any]) -> frozenset[int]:
    """The positions of the parameters a manifest record's function writes in place."""
    return frozenset(int(k) for k in info["signature"].get("written", ()))


def manifest_info(
    graphs: Mapping[str, relax.Function],
    packed: list[str],
    fast: Mapping[str, Mapping[str, Any]],
    written: Mapping[str, frozenset[int]],
) -> dict[str, Any]:
    """The whole manifest: ABI version, functions by name (with the wrappers
    `fast` names and the parameters `written` in place), packed names."""
    return {
        "abi": ABI_VERSION,
        "functions": {
            name: function_info(name, f, fast.get(name, {}), written[name])
            for name, f in graphs.items()
        },
        "packed": packed,
    }


def prefixed(manifest: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """The manifest of a library whose symbols carry `prefix` (docs/abi.md)."""
    functions = {}
    for name, info in manifest["functions"].items():
        info = {**info, "symbol": entry_symbol(name, prefix)}
        if "fastcall" in info:
            info["fastcall"] = fastcall_symbol(name, prefix)
        functions[name] = info
    return {**manifest, "functions": functions}
