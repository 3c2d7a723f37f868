"""The C side of an exported library: its header, rendered from the manifest.

The header defines the DLPack 1.0 structs itself (a C user needs no dlpack.h;
one who includes dlpack.h first keeps its definitions), so `cc main.c lib.so`
is all it takes. Each entry is declared with a comment listing its arguments
and results, generated from the same manifest the Python loader reads. What
every library shares (the structs, status codes, the packed-function type) is
defined once however many libraries' headers a program includes; what the
library exports is declared under its prefix.
"""

from __future__ import annotations

from typing import Any

from tvmlite.runtime.abi import leaves
from tvmlite.runtime.manifest import signature_from_info

_COMMON = """\
#ifndef TVMLITE_COMMON_DEFINED
#define TVMLITE_COMMON_DEFINED
#ifndef DLPACK_DLPACK_H_
/* DLPack 1.0 (https://dmlc.github.io/dlpack), the subset this library uses. */
typedef struct { int32_t device_type; int32_t device_id; } DLDevice;  /* kDLCPU = 1 */
typedef struct { uint8_t code; uint8_t bits; uint16_t lanes; } DLDataType;
enum { kDLInt = 0, kDLUInt = 1, kDLFloat = 2, kDLBfloat = 4, kDLBool = 6 };
typedef struct {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;      /* NULL: compact row-major; in elements */
  uint64_t byte_offset;
} DLTensor;
typedef struct { uint32_t major; uint32_t minor; } DLPackVersion;
typedef struct DLManagedTensorVersioned {
  DLPackVersion version;  /* {1, 0} */
  void* manager_ctx;
  void (*deleter)(struct DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
} DLManagedTensorVersioned;
#endif

/* Status codes of every entry (the message is in `err`). */
enum {
  TVMLITE_OK = 0,
  TVMLITE_ERR_ARGUMENT = 1,  /* an argument does not match the signature */
  TVMLITE_ERR_RUNTIME = 2,   /* a check inside the body failed */
  TVMLITE_ERR_NOMEM = 3,     /* out of memory */
  TVMLITE_ERR_PACKED = 4     /* a packed function failed or is not bound */
};

/* Entries take the flattened arguments and write owned results to `outs`:
 * release each result with `outs[k]->deleter(outs[k])`. */
typedef int32_t (*tvmlite_packed_fn)(DLTensor* const* args, int32_t num_args,
                                     DLManagedTensorVersioned** outs, int32_t num_outs,
                                     char* err, int64_t err_len);
#endif  /* TVMLITE_COMMON_DEFINED */
"""

_API = """\
/* Every symbol of this library starts with `{p}`. */

/* Packed functions the module calls (R.call_packed): bind every name before
 * calling an entry that uses it. Returns 0, or -1 if the module does not use
 * `name`. `{p}missing_packed` names one still unbound (NULL if none). */
int32_t {p}bind_packed(const char* name, tvmlite_packed_fn fn);
const char* {p}missing_packed(void);
extern const int32_t {p}packed_count;
extern const char* const {p}packed_names[];

/* A tensor in the layout results use (dtype as code | bits << 8 | lanes << 16). */
DLManagedTensorVersioned* {p}alloc_tensor(int32_t ndim, const int64_t* shape, int32_t dtype);
/* The JSON manifest: functions, their signatures, packed names. */
extern const char {p}manifest[];
"""


HEADER_MARK = "compiled by tvmlite. Generated; do not edit. */"  # ends the first line


def render_header(manifest: dict[str, Any], library: str, guard: str, prefix: str) -> str:
    """The header of `library`, whose `manifest` and exported symbols carry `prefix`."""
    lines = [
        f"/* {library}: {HEADER_MARK}",
        f"#ifndef {guard}",
        f"#define {guard}",
        "#include <stdint.h>",
        "#ifdef __cplusplus",
        'extern "C" {',
        "#endif",
        "",
        _COMMON,
        _API.format(p=prefix),
    ]
    lines.extend(_packed(manifest.get("packed", []), prefix))
    for name, info in manifest.get("functions", {}).items():
        lines.extend(_entry(name, info))
    lines += ["#ifdef __cplusplus", "}", "#endif", f"#endif  /* {guard} */", ""]
    return "\n".join(lines)


def _packed(names: list[str], prefix: str) -> list[str]:
    """The packed functions this library calls, for a C user to bind."""
    if not names:
        return []
    out = [f"/* This library calls these packed functions: bind each ({prefix}bind_packed)"]
    out.append(" * before calling an entry (Python's tvmlite.load_module binds registered ones):")
    for name in names:
        own = (
            "  (tvmlite's: a gemm over DLTensors, docs/abi.md)"
            if name.startswith("tvmlite.blas.")
            else ""
        )
        out.append(f" *   {_comment_text(name)}{own}")
    out.append(" */")
    return out


def _comment_text(text: str) -> str:
    """`text` as it can stand inside a C comment."""
    return text.replace("*/", "* /").replace("\n", " ")


def _entry(name: str, info: dict[str, Any]) -> list[str]:
    params, ret = signature_from_info(info)
    num_input = info.get("num_input")
    out = [f"/* {name}: arguments (args[k]):"]
    if type(num_input) is int and num_input < len(params):
        data = sum(len(leaves(p.struct_info, p.name)) for p in params[:num_input])
        out.append(f" *   (num_input {num_input}: [0, {data}) are data, the rest are weights)")
    k = 0
    for index, p in enumerate(params):
        role = " (weight)" if type(num_input) is int and index >= num_input else ""
        for leaf in leaves(p.struct_info, p.name):
            out.append(f" *   [{k}] {leaf.label}: {describe(leaf.sinfo)}{role}")
            k += 1
    out.append(" * results (outs[k], owned by the caller):")
    for k, leaf in enumerate(leaves(ret, "result")):
        out.append(f" *   [{k}] {leaf.label}: {describe(leaf.sinfo)}")
    out.append(" */")
    out.append(f"int32_t {info['symbol']}(DLTensor* const* args, int32_t num_args,")
    out.append(
        "    DLManagedTensorVersioned** outs, int32_t num_outs, char* err, int64_t err_len);"
    )
    out.append("")
    return out


def describe(sinfo: Any) -> str:
    """`float32 (n, 784)`, `int64 scalar`, `shape of 2`: a leaf in words."""
    from tvmlite.dsl import relax, tir

    if isinstance(sinfo, relax.TensorStructInfo):
        if isinstance(sinfo.shape, tuple):
            dims = [str(d.value) if isinstance(d, tir.IntImm) else d.name for d in sinfo.shape]
            shape = "(" + ", ".join(dims) + ("," if len(dims) == 1 else "") + ")"
        else:
            shape = f"rank {sinfo.ndim}" if sinfo.ndim >= 0 else "any rank"
        return f"{sinfo.dtype} {shape}"
    if isinstance(sinfo, relax.PrimStructInfo):
        return f"{sinfo.dtype} scalar (0-d tensor)"
    if isinstance(sinfo, relax.ShapeStructInfo):
        return "shape (1-d int64 tensor)"
    return type(sinfo).__name__
