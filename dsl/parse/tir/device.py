"""Intrinsics of TVM's device and runtime layers that TVM prints as plain `T.*`
calls: tensor-core fragments, warp shuffles, legacy PTX, packed-call stacks,
profiling marks, fixed-point multiplies, `T.vscale()`, Trainium's `T.nki.*`.

They parse into `tir.Call`s with the result dtype TVM gives them and print back
as written. Nothing here runs on a CPU build: the code generator refuses each
one by name (`T.tvm_mma_sync is not supported by the LLVM backend`).
"""

from __future__ import annotations

from tvmlite.dsl import dtype as dt
from tvmlite.dsl import relax, tir
from tvmlite.dsl.index_map import IndexMap
from tvmlite.dsl.parse.tir.expr import ExprParser, source_of
from tvmlite.dsl.parse.tir.math import Args, Builtin, Kwargs, Sig
from tvmlite.dsl.parse.tir.ops import Value, make_const
from tvmlite.grammar import syntax

# The names TVM 0.27 prints PTX instructions under (its op registry's `TScriptPrinterName`
# of `tirx.ptx.*`; a Python keyword is spelled with a trailing underscore).
PTX_FAMILIES = (
    "abs", "activemask", "add", "and_", "applypriority", "atom", "bar", "barrier", "bfe",
    "bfi", "bfind", "bmsk", "brev", "clmad", "clusterlaunchcontrol", "clz", "cnot", "copysign",
    "cos", "cp", "createpolicy", "cvt", "cvt_pack", "cvta", "discard", "div", "dp2a", "dp4a",
    "elect_sync", "ex2", "fabric", "fence", "fma", "fns", "getctarank", "griddepcontrol",
    "isspacep", "ld", "ldmatrix", "ldu", "lg2", "lop3", "mad", "mad24", "mapa", "match", "max",
    "mbarrier", "min", "mma", "mov", "movmatrix", "mul", "mul24", "multimem_cp",
    "multimem_ld_reduce", "multimem_red", "multimem_red_async", "multimem_st",
    "multimem_st_async", "neg", "not_", "or_", "popc", "prefetch", "prefetchu", "prmt", "rcp",
    "red", "red_async", "redux_sync", "rem", "rsqrt", "sad", "selp", "set", "setmaxnreg",
    "setp", "shf", "shfl_sync", "shl", "shr", "sin", "slct", "spcompress", "spdecompress",
    "sqrt", "st", "st_async", "st_bulk", "stmatrix", "sub", "szext", "tanh", "tcgen05",
    "tensormap_cp_fenceproxy", "tensormap_replace", "testp", "vote_sync", "wgmma", "xor",
)  # fmt: skip
# Result dtype: a dtype, or "argN" for the dtype of the N-th argument.
_RESULT = {
    "tvm_fill_fragment": "handle",
    "tvm_load_matrix_sync": "handle",
    "tvm_store_matrix_sync": "handle",
    "tvm_mma_sync": "handle",
    "tvm_bmma_sync": "handle",
    "tvm_storage_sync": "handle",
    "tvm_access_ptr": "handle",
    "tvm_thread_allreduce": "handle",
    "tvm_stack_make_array": "handle",
    "tvm_stack_make_shape": "handle",
    "tvm_stack_alloca": "handle",
    "tvm_kernel_replace_point": "handle",
    "start_profile_intrinsic": "handle",
    "end_profile_intrinsic": "handle",
    "prefetch": "handle",
    "ptx_legacy.ldmatrix": "int8",  # TVM's element type of the fragment, unless dtype=
    "ptx_legacy.mma": "handle",
    "cuda.mma_fill_legacy": "handle",
    "cuda.cta_sync": "handle",
    "metal.make_filled_simdgroup_matrix": "handle",
    # Trainium (NKI) instructions: statements on buffer elements
    **{
        f"nki.{name}": "handle"
        for name in (
            "load",
            "store",
            "tensor_copy",
            "matmul",
            "activation",
            "reciprocal",
            "tensorreduce",
            "tensortensor",
            "tensorscalar",
            "memset",
            "activation_reduce",
            "tensorscalar_reduce",
            "identity",
            "scalar_tensor_tensor",
            "scalar_tensor_scalar",
            "affine_select",
        )
    },  # fmt: skip
    # tirx device namespaces (T.cuda.*, T.ptx.*, ...): statements unless listed below
    **{
        name: "handle"
        for name in (
            "cuda.iket.mark",
            "cuda.iket.range_end",
            "cuda.iket.range_push",
            "cuda.iket.range_pop",
            "cuda.thread_fence",
            "cuda.nano_sleep",
            "cuda.printf",
            "cuda.cluster_sync",
            "cuda.mbarrier_wait",
            "cuda.mma_store_legacy",
            "cuda.grid_sync",
            "cuda.warp_sync",
            "cuda.warpgroup_sync",
            "cuda.float22half2",
            "cuda.float8tohalf8",
            "cuda.half8tofloat8",
            "cuda.mbarrier_wait_acquire_cluster",
            "cuda.runtime_instr_desc",
            "cuda.trap_when_assert_failed",
            "cuda.wait_until",
            "cuda.wgmma.noop_barrier",
            "cuda.wgmma.encode_matrix_descriptor",
            "cuda.tcgen05.encode_matrix_descriptor",
            "cuda.timer_init",
            "cuda.timer_finalize",
            "nvshmem.barrier_all",
            "nvshmem.fence",
            "nvshmem.getmem_nbi",
            "nvshmem.getmem_nbi.block",
            "nvshmem.getmem_nbi.warp",
            "nvshmem.putmem_nbi",
            "nvshmem.putmem_nbi.block",
            "nvshmem.putmem_nbi.warp",
            "nvshmem.putmem_signal_nbi",
            "nvshmem.putmem_signal_nbi.block",
            "nvshmem.putmem_signal_nbi.warp",
            "nvshmem.signal_op",
            "nvshmem.wait_until",
            "metal.simdgroup_load",
            "metal.simdgroup_store",
            "metal.simdgroup_multiply_accumulate",
            "ptr_byte_offset",
            "handle_add_byte_offset",
            "nvshmem.quiet",
        )
    },  # fmt: skip
    "print_buffer": "str1",  # (data, "float32", ...): the element type
    **{
        f"cuda.{name}": "uint32"
        for name in (
            "ballot_sync",
            "float22bfloat162_rn",
            "float22bfloat162_rn_from_float2",
            "float_as_uint",
            "fp8x4_e4m3_from_float4",
            "get_tmem_addr",
            "hmax2",
            "hmin2",
            "iket.official_event",
            "reduce_add_sync_u32",
            "reduce_min_sync_u32",
            "smem_addr_from_uint64",
        )
    },
    **{
        f"cuda.{name}": "uint64"
        for name in (
            "bfloat1622float2",
            "clock64",
            "fadd2_rn",
            "fmul2_rn",
        )
    },
    **{
        f"cuda.{name}": "float32"
        for name in (
            "bfloat162float",
            "fdividef",
            "float2_x",
            "float2_y",
            "half2float",
            "uint_as_float",
        )
    },
    **{f"cuda.{name}": "int32" for name in ("any_sync", "ffs_u32", "thread_rank")},
    "cuda.syncthreads_and": "int64",
    "cuda.syncthreads_or": "int64",
    "cuda.atomic_add": "arg1",  # (address, value): the value's
    "cuda.warp_reduce": "arg0",  # (value, op, width): the value's
    "cuda.cta_reduce": "arg0",  # (value, op, num_warps, scratch)
    "nvshmem.my_pe": "int32",
    "nvshmem.n_pes": "int32",
    # TVM's PTX instruction families: each a statement (a destination is an operand), its
    # operands then its modifiers as strings (`T.ptx.add(d, a, b, "rn", "", "f32", ...)`)
    **{f"ptx.{name}": "handle" for name in PTX_FAMILIES},
    # an address operand of one (`[base+byte_offset]`), a pure call TVM prints as written
    "ptx.addr": "handle",
    "cuda.iket.range_start": "uint32",
    "cuda.iket.sentinel_token": "uint32",
    "cuda.elect_sync": "uint32",
    "cuda.cvta_generic_to_shared": "uint32",
    "cuda.make_float2": "uint64",
    "tvm_struct_set": "int32",
    # the runtime's own calls (lowered packed calls, workspaces, lists of objects)
    "TVMBackendAllocWorkspace": "handle",
    "TVMBackendFreeWorkspace": "int32",
    "anylist_getitem": "handle",
    "anylist_resetitem": "int32",
    "anylist_setitem_call_packed": "int32",
    "anylist_setitem_call_cpacked": "int32",
    "lookup_param": "handle",
    "tvm_global_barrier_kinit": "handle",
    "tvm_throw_last_error": "handle",
    "tvm_context_id": "handle",  # the runtime's context of a lowered packed call
    "tvm_tuple": "handle",
    "tvm_warp_activemask": "uint32",
    "cooperative_tensor_fill": "handle",
    "cooperative_tensor_load": "handle",
    "cooperative_tensor_store": "handle",
    "masked_store": "handle",
    "filter": "bool",
    "fma": "arg0",
    "selector": "arg0",
    "ignore_loop_partition": "bool",
    "cuda.atomic_cas": "arg1",
    "cuda.__shfl_sync": "arg1",
    "cuda.__shfl_up_sync": "arg1",
    "cuda.__shfl_down_sync": "arg1",
    "cuda.__shfl_xor_sync": "arg1",
    "webgpu.subgroup_shuffle_up": "arg0",
    "webgpu.subgroup_shuffle_down": "arg0",
    "cuda.mov_sreg": "bits0",  # int<bits>
    "s_tir.cp_async_raw": "str0",  # the dtype written as the first argument
    "vectorlow": "str0",
    "vectorhigh": "str0",
    "cuda.ldg": "str1?",  # `T.cuda.ldg(ptr, "float32")`; the vector form is a statement
    "cuda.__activemask": "uint32",
    "vscale": "int32",
    "undef": "int32",
    "isnullptr": "bool",
    "tvm_thread_invariant": "arg0",
    "q_multiply_shift": "arg0",
    "q_multiply_shift_per_axis": "arg0",
    "webgpu.subgroup_shuffle": "arg0",
    "metal.simd_shuffle": "arg0",
    "metal.simd_shuffle_up": "arg0",
    "metal.simd_shuffle_down": "arg0",
    "s_tir.ldg32": "arg0",  # (register, guard, address, local offset): the register's
    "tvm_warp_shuffle": "arg1",
    "tvm_warp_shuffle_up": "arg1",
    "tvm_warp_shuffle_down": "arg1",
    "tvm_warp_shuffle_xor": "arg1",
    "cuda.mma_fill": "str0",  # ("float16", local size, pointer, offset): TVM prints the type
    "cuda.mma_store": "str0",
    "thread_return": "handle",  # a thread leaves the kernel
}


# Trailing parameters TVM's API gives a value when a call leaves them out: (how many
# arguments come before them, their values); the call is stored and printed with them.
_DEFAULTS: dict[str, tuple[int, tuple[int | bool | float | str, ...]]] = {
    "tvm_storage_sync": (1, (False, -1)),
    "cuda.warp_reduce": (2, (32,)),
    "cuda.iket.official_event": (1, ("",)),
    "cuda.wait_until": (3, ("gpu", "global", "", 0)),
    "nvshmem.wait_until": (3, ("uint64_t",)),
    "cooperative_tensor_load": (7, (0, 0, 0, 0)),
    "cooperative_tensor_store": (7, (0, 0, 0, 0)),
    "metal.make_filled_simdgroup_matrix": (3, (8, 8)),
    "metal.simdgroup_load": (4, (8, 8, False)),
    "metal.simdgroup_store": (4, (8, 8, False)),
    "nki.matmul": (3, (True,)),
    "nki.activation": (3, (0.0, 1.0)),
    "nki.activation_reduce": (5, (0.0, 1.0)),
    "nki.tensorscalar": (4, (False,)),
    "nki.tensorscalar_reduce": (6, (False,)),
    "nki.scalar_tensor_tensor": (6, (False, False)),
    "nki.scalar_tensor_scalar": (6, (False, False)),
}


# Intrinsics whose TVM API takes the result dtype first (or as `dtype=`), which TVM does
# not print: the argument count with it. The printed form has the default result type.
_LEADING_DTYPE = {"cuda.mma_fill_legacy": 4, "cuda.mma_store_legacy": 7, "ptx_legacy.ldmatrix": 8}


def _device(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    dtype = None
    if "dtype" in kw:
        dtype = p.dtype_arg(kw["dtype"])
    elif len(args) == _LEADING_DTYPE.get(name):
        dtype, args = p.dtype_arg(args[0]), args[1:]
    values = tuple(p.expr(arg) for arg in args)
    if name in _DEFAULTS:
        before, defaults = _DEFAULTS[name]
        if before <= len(values) < before + len(defaults):
            rest = defaults[len(values) - before :]
            values += tuple(_default(v, node) for v in rest)
    if name == "tvm_access_ptr" and values and isinstance(values[0], tir.StringImm):
        # `T.tvm_access_ptr("float16", ...)`: TVM's API makes the type a type annotation
        pointee = values[0].value
        values = (tir.Call(pointee, "type_annotation", (), args[0].span), *values[1:])
    if dtype is None:
        dtype = _result_dtype(p, name, node, values)
    return tir.Call(dtype, name, values, node.span)


def _default(value: int | bool | float | str, node: syntax.Call) -> tir.PrimExpr:
    if isinstance(value, str):
        return tir.StringImm(value, span=node.span)
    return make_const(value, _DEFAULT_DTYPE[type(value)], node.span)


_DEFAULT_DTYPE = {bool: "bool", int: "int32", float: "float32"}


# Shorthands TVM's API expands into a reduction: `T.cuda.warp_sum(v)` is
# `T.cuda.warp_reduce(v, "sum", 32)`, `T.cuda.cta_max(v, w, s)` `T.cuda.cta_reduce(v, "max", w, s)`.
_REDUCTIONS = {
    f"cuda.{scope}_{op}": (f"cuda.{scope}_reduce", op)
    for scope in ("warp", "cta")
    for op in ("sum", "max", "min")
}


def _reduction(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    target, op = _REDUCTIONS[name]
    if not args:
        raise p.error(f"T.{name} expects the value to reduce", node)
    marker = syntax.Constant(op, span=node.span)
    return _device(p, target, node, [args[0], marker, *args[1:]], kw)


def _struct_get(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    """`T.tvm_struct_get(handle, index, field, "int32")`: the last argument is the result
    type (`T.handle("int64", "global").ty` for a typed pointer), not an operand."""
    dtype, pointee = p.type_arg(args[-1])
    values = tuple(p.expr(arg) for arg in args[:-1])
    return tir.Call(dtype, name, values, node.span, pointee=pointee)


def _func_call(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    """`T.cuda.func_call("f", *args, source_code="...", return_type=T.int32)`: a CUDA
    function compiled from the source the call carries, kept as TVM keeps it (the
    source last among the arguments; the result type, void unless given, as dtype)."""
    if "source_code" not in kw:
        raise p.error("T.cuda.func_call needs source_code=, the CUDA function's source", node)
    if not args:
        raise p.error("T.cuda.func_call expects the CUDA function's name", node)
    dtype, pointee = p.type_arg(kw["return_type"]) if "return_type" in kw else ("void", None)
    source = tir.StringImm(p.str_arg(kw["source_code"], "source_code"), span=node.span)
    values = (*(p.expr(arg) for arg in args), source)
    return tir.Call(dtype, name, values, node.span, pointee=pointee)


def _result_dtype(
    p: ExprParser, name: str, node: syntax.Call, values: tuple[tir.PrimExpr, ...]
) -> str:
    """The dtype `_RESULT` gives: fixed, or read off an argument (`argN`: its dtype,
    `strN`: the dtype string it is, `bitsN`: int of the width it is; a trailing `?`:
    a statement (handle) when that argument is not there or not of that form)."""
    result = _RESULT[name]
    optional = result.endswith("?")
    kind = result.rstrip("?-0123456789")
    if kind not in ("arg", "str", "bits"):
        return result
    k = int(result[len(kind) :].rstrip("?"))
    value = values[k] if -len(values) <= k < len(values) else None
    if kind == "arg" and value is not None:
        return value.dtype
    if kind == "bits" and isinstance(value, tir.IntImm):
        return f"int{value.value}"
    if kind == "str" and isinstance(value, tir.StringImm) and dt.is_valid(value.value):
        return value.value
    if optional:
        return "handle"
    if value is None:
        raise p.error(f"T.{name} expects at least {k + 1} arguments, got {len(values)}", node)
    what = {"bits": "a bit width", "str": "a dtype string"}[kind]
    raise p.error(f"argument {k % len(values) + 1} of T.{name} must be {what}", node)


# tirx tile operators (`T.tile.add(C[0:128, 0:512], A[0:128, 0:512], T.float32(3.0))`):
# statements over buffer regions, which tvmlite keeps as data.
TILE_OPERATORS = (
    "add", "sub", "mul", "fdiv", "fma", "maximum", "minimum", "max", "min", "sum", "gemm",
    "gemm_async", "copy", "copy_async", "fill", "memset", "zero", "exp", "exp2", "log2",
    "sqrt", "reciprocal", "silu", "cast", "permute_layout", "binary_chain", "binary_reduce",
    "unary_reduce", "reduce_negate", "select",
)  # fmt: skip
# their keyword options, kept as attribute values (`workspace={"C": C_sbuf}`)
TILE_OPTIONS = ("workspace", "max_inst_size", "dispatch", "mbar", "src_selector", "cache")


def _tile(p: ExprParser, name: str, node: syntax.Call, args: Args, kw: Kwargs) -> Value:
    """A whole buffer or a sliced one is a region, `True`/`False` a Python bool,
    anything else an expression. Without a buffer among its arguments, it is the
    builtin of the same name (`T.tile.exp(x)` is `T.exp(x)`, as in TVM)."""
    scope, _, scalar = name.partition(".")
    if not kw and not any(_names_buffer(p, arg) for arg in args) and scalar in SCALAR_TWINS:
        return SCALAR_TWINS[scalar](p, scalar, node, args, kw)
    name = f"{_SCOPE_SPELLING.get(scope, scope)}.{scalar}"
    regions, options = p.region, p.attr_value
    if regions is None or options is None:
        raise p.error(f"{name} takes buffer regions: it is a statement of a prim function", node)
    values: list = []
    items, kw = _in_tvms_order(p, scalar, node, args, kw)
    outputs = 2 if scalar in ("binary_reduce", "unary_reduce") else 1
    for position, arg in enumerate(items):
        if not isinstance(arg, syntax.Node):  # an argument TVM's API fills in or converts
            values.append(arg)
            continue
        # an output is a region even of one element (`A[0]`, which TVM prints for `A[0:1]`)
        sliced = isinstance(arg, syntax.Subscript) and (
            any(isinstance(i, syntax.Slice) for i in arg.indices)
            or source_of(arg.value) is not arg.value
            or position < outputs
            and _names_buffer(p, arg)
        )
        whole = isinstance(arg, syntax.Name) and isinstance(p.scope.lookup(arg.id), tir.Buffer)
        if isinstance(arg, syntax.Constant) and isinstance(arg.value, bool):
            values.append(arg.value)
        elif isinstance(arg, syntax.List) or _is_op_or_none(arg):  # axes, `I.Op(...)`, None
            values.append(options(arg))
        elif isinstance(arg, syntax.Lambda):  # a select's predicate of the indices
            values.append(_predicate(p, arg))
        else:
            values.append(regions(arg) if sliced or whole else p.expr(arg))
    kwargs = tuple((key, options(value)) for key, value in kw.items())
    return tir.Call("handle", name, tuple(values), node.span, kwargs)


# The reductions, chains and asynchronous GEMM of TVM's tile API: its parameters (with
# their defaults), which are operators (a name such as "sum" is `I.Op("tirx.tile.sum")`)
# and the order TVM keeps (and prints) them in, when it is not the API's.
_NONE = object()  # a parameter left out (the scale factors of gemm_async)
_TILE_APIS: dict[str, tuple[tuple[tuple[str, object], ...], tuple[str, ...], tuple[str, ...]]] = {
    "binary_chain": (
        (("output", None), ("data", None), ("operand0", None), ("operand1", None),
         ("op0", None), ("op1", None), ("reverse1", False)),
        ("op0", "op1"), (),
    ),
    "binary_reduce": (
        (("binary_output", None), ("reduce_output", None), ("binary_input1", None),
         ("binary_input2", None), ("binary_op", None), ("reduce_op", None),
         ("reduce_axes", -1)),
        ("binary_op", "reduce_op"), (),
    ),
    "unary_reduce": (
        (("unary_output", None), ("reduce_output", None), ("unary_input", None),
         ("unary_op", None), ("reduce_op", None), ("bias", None), ("scale", None),
         ("reduce_axes", -1)),
        ("unary_op", "reduce_op"), (),
    ),
    "reduce_negate": (
        (("output", None), ("input", None), ("reduce_op", None), ("reduce_axes", -1),
         ("accum", False)),
        ("reduce_op",), ("output", "input", "reduce_axes", "accum", "reduce_op"),
    ),
    "gemm_async": (
        (("C", None), ("A", None), ("B", None), ("SFA", _NONE), ("SFB", _NONE),
         ("transA", False), ("transB", False), ("accum", False)),
        (), (),
    ),
}  # fmt: skip


def _in_tvms_order(
    p: ExprParser, op: str, node: syntax.Call, args: Args, kw: Kwargs
) -> tuple[list, Kwargs]:
    """The arguments of a tile operator as TVM keeps them: for the operators of
    `_TILE_APIS` written as TVM's API takes them (`T.tile.reduce_negate(out, x, "max")`),
    defaults filled in, operator names as operators, axes as a list, in TVM's order;
    what TVM printed (`..., [-1], False, I.Op("tirx.tile.max")`) is already so."""
    api = _TILE_APIS.get(op)
    if api is None or _printed_form(op, args):
        return list(args), kw
    params, operators, order = api
    names = [name for name, _ in params]
    if len(args) > len(names):
        raise p.error(f"T.tile.{op} takes at most {len(names)} arguments, got {len(args)}", node)
    bound: dict[str, object] = dict(zip(names, args, strict=False))
    rest = {}
    for key, value in kw.items():
        if key in names:
            if key in bound:
                raise p.error(f"T.tile.{op} got {key} twice", value)
            bound[key] = value
        else:
            rest[key] = value
    for name, default in params:
        if name not in bound:
            if default is None and name not in ("bias", "scale"):
                raise p.error(f"T.tile.{op} needs {name}", node)
            bound[name] = default
        value = bound[name]
        named = isinstance(value, syntax.Constant) and isinstance(value.value, str)
        if name in operators and named:
            bound[name] = relax.Op(f"tirx.tile.{value.value}", value.span)  # type: ignore[union-attr]
        elif name == "reduce_axes" and isinstance(value, syntax.Node):
            axes = p.attr_value(value)  # type: ignore[misc]
            bound[name] = (axes,) if isinstance(axes, int) else axes
        elif name == "reduce_axes":
            bound[name] = (value,)
    items = [bound[name] for name in (order or names) if bound[name] is not _NONE]
    return items, rest


def _printed_form(op: str, args: Args) -> bool:
    """Whether a call is in the order TVM prints (where it is not its API's)."""
    if op == "reduce_negate":  # (output, input, reduce_axes, accum, reduce_op)
        return len(args) > 2 and isinstance(args[2], syntax.List)
    if op == "gemm_async":  # without scale factors: (C, A, B, transA, transB, accum)
        third = args[3] if len(args) > 3 else None
        return isinstance(third, syntax.Constant) and isinstance(third.value, bool)
    return False


def _predicate(p: ExprParser, node: syntax.Lambda) -> IndexMap:
    """`lambda i, j: i < j`, a function of a region's indices (int32, as TVM's)."""
    params = tuple(tir.Var(name, "int32", span=node.span) for name in node.params)
    if len(set(node.params)) != len(node.params):
        raise p.error("the lambda repeats a parameter name", node)
    p.push()
    try:
        for name, var in zip(node.params, params, strict=True):
            p.define(name, var)
        body = p.expr(node.body)
    finally:
        p.pop()
    return IndexMap(params, (body,), span=node.span)


def _is_op_or_none(node: syntax.Node) -> bool:
    """An operator a tile reduction applies (`I.Op("tirx.tile.sum")`), or an argument
    left out (`None`, a unary reduction's bias)."""
    if isinstance(node, syntax.Constant):
        return node.value is None
    return isinstance(node, syntax.Call) and syntax.dotted(node.func) == "I.Op"


def _names_buffer(p: ExprParser, node: syntax.Node) -> bool:
    if isinstance(node, syntax.Subscript):
        node = node.value
    return isinstance(node, syntax.Name) and isinstance(p.scope.lookup(node.id), tir.Buffer)


def _api_keywords(op: str) -> tuple[str, ...]:
    return tuple(name for name, _ in _TILE_APIS[op][0]) if op in _TILE_APIS else ()


# The builtins a tile operator of scalars stands for; intrin.py fills it in.
SCALAR_TWINS: dict[str, Builtin] = {}

DEVICE_BUILTINS: dict[str, tuple[Builtin, Sig]] = {
    name: (_device, Sig(0, None, ("dtype",) if name in _LEADING_DTYPE else ())) for name in _RESULT
}
DEVICE_BUILTINS["tvm_struct_get"] = (_struct_get, Sig(4, 4))
DEVICE_BUILTINS["cuda.func_call"] = (_func_call, Sig(1, None, ("source_code", "return_type")))
DEVICE_BUILTINS.update({name: (_reduction, Sig(1, None)) for name in _REDUCTIONS})
# the same operators under the execution scope that runs them (`T.cta.copy`, `T.wg.fill`)
TILE_SCOPES = ("tile", "cluster", "cta", "warpgroup", "wg", "warp", "thread")
# the spelling TVM prints a scope in (`T.thread.copy` is the default scope's `T.tile.copy`)
_SCOPE_SPELLING = {"thread": "tile", "warpgroup": "wg"}
DEVICE_BUILTINS.update(
    {
        f"{scope}.{name}": (_tile, Sig(0, None, (*TILE_OPTIONS, *_api_keywords(name)), True))
        for scope in TILE_SCOPES
        for name in TILE_OPERATORS
    }
)
