"""Blocks: `with T.block/T.sblock(name):` and the header statements that fill them
(`T.axis.*`, `T.where`, `T.reads`/`T.writes`, attrs, block-level allocations,
region `T.match_buffer`, `with T.init():`).

The header statements mutate the innermost open `BlockFrame`; the block node is
built when its body ends, inferring regions that were not written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tvmlite.diagnostics import did_you_mean
from tvmlite.dsl import dtype as dt
from tvmlite.dsl import tir
from tvmlite.dsl.comments import Comments, add, take_head
from tvmlite.dsl.parse.tir.buffer import implied_offset
from tvmlite.dsl.parse.tir.ops import Lit, difference, materialize
from tvmlite.dsl.regions import infer_regions
from tvmlite.grammar import syntax

if TYPE_CHECKING:  # stmt.py builds this helper: a runtime import would be a cycle
    from tvmlite.dsl.parse.tir.stmt import StmtParser

AXIS_KINDS = {
    "axis.spatial": tir.SPATIAL,
    "axis.S": tir.SPATIAL,
    "axis.reduce": tir.REDUCE,
    "axis.R": tir.REDUCE,
    "axis.scan": tir.SCAN,
    "axis.opaque": tir.OPAQUE,
}
_REMAP_KINDS = {"S": tir.SPATIAL, "R": tir.REDUCE}
FUNCTION = "function"  # `level` marker: statements directly in the function body


@dataclass
class BlockFrame:
    """What the header statements of one block have declared so far."""

    name: str
    node: syntax.Node
    iter_vars: list[tir.IterVar] = field(default_factory=list)
    iter_values: list[tir.PrimExpr] = field(default_factory=list)
    predicate: tir.PrimExpr | None = None
    reads: list[tir.BufferRegion] | None = None
    writes: list[tir.BufferRegion] | None = None
    annotations: list[tuple[str, Any]] = field(default_factory=list)
    allocs: list[tir.Buffer] = field(default_factory=list)
    match_buffers: list[tir.MatchBufferRegion] = field(default_factory=list)
    init: tir.Stmt | None = None
    comments: Comments | None = None  # of the header statements, by role


class BlockParser:
    """Block construction: headers, iter vars, regions, allocations and the block
    itself; statements and block state come from the function parser (`fn`)."""

    def __init__(self, fn: StmtParser) -> None:
        self.fn = fn  # the function body being parsed: its state and other helpers
        self.ctx = fn.ctx
        self.exprs = fn.exprs

    def header_comments(self, sink: Comments | None, role: str) -> Comments | None:
        """`sink` (a block's or the function's comments) plus those of the header
        statement being parsed, which the printer writes as the `role` line of its
        owner. What comes after the statement stays with it (see `stmts`)."""
        return add(sink, role, take_head(self.fn.node))

    def direct_block(self, node: syntax.Node, what: str) -> BlockFrame:
        """The block whose header `node` belongs to; it must be directly in it."""
        if isinstance(self.fn.level, BlockFrame):
            return self.fn.level
        raise self.ctx.error(f"{what} must be directly inside a T.block/T.sblock", node)

    # ------------------------------------------------------------ the block itself

    def with_block(
        self, call: syntax.Call, body: tuple[syntax.Node, ...], node: syntax.Node
    ) -> tir.Stmt:
        name = ""
        if len(call.args) > 1:
            raise self.ctx.error(f"T.block expects at most 1 argument, got {len(call.args)}", call)
        if call.args:
            name = self.exprs.str_arg(call.args[0], "the block name")
        for kw in call.keywords:
            if kw.name == "name":
                name = self.exprs.str_arg(kw.value, "the block name")
            elif kw.name != "no_realize":
                hint = did_you_mean(kw.name, ("name", "no_realize"), quote=True)
                raise self.ctx.error(
                    f"T.block got an unexpected keyword argument '{kw.name}'{hint}", kw
                )
        frame = BlockFrame(name, node)
        saved = self.fn.level
        self.fn.blocks.append(frame)
        self.exprs.push()
        self.fn.level = frame
        try:
            stmt = self.fn.body(body, node.span)
        finally:
            self.fn.level = saved
            self.exprs.pop()
            self.fn.blocks.pop()
        reads, writes = frame.reads, frame.writes
        if reads is None or writes is None:
            inferred = infer_regions(
                stmt, frame.init, tuple(frame.allocs), tuple(frame.match_buffers)
            )
            reads = list(inferred[0]) if reads is None else reads
            writes = list(inferred[1]) if writes is None else writes
        block = tir.Block(
            name,
            tuple(frame.iter_vars),
            tuple(reads),
            tuple(writes),
            stmt,
            frame.init,
            tuple(frame.allocs),
            tuple(frame.match_buffers),
            tuple(frame.annotations),
            node.span,
            frame.comments,
        )
        predicate = frame.predicate or tir.IntImm("bool", 1)
        return tir.BlockRealize(tuple(frame.iter_values), predicate, block, node.span)

    def with_init(
        self, call: syntax.Call, body: tuple[syntax.Node, ...], node: syntax.Node
    ) -> None:
        frame = self.direct_block(node, "with T.init()")
        if call.args or call.keywords:
            raise self.ctx.error("T.init takes no arguments", call)
        if frame.init is not None:
            raise self.ctx.error(f"block '{frame.name}' has more than one T.init()", node)
        frame.comments = self.header_comments(frame.comments, "init")
        frame.init = self.fn.nested_body(body, node.span)

    # ------------------------------------------------------------ iter vars

    def axis(self, kind: str, target: syntax.Node, call: syntax.Call) -> None:
        """`v = T.axis.spatial(dom, binding)`; dom is an extent or a (min, max) pair."""
        frame = self.direct_block(call, f"T.{syntax.dotted(call.func)[2:]}")  # type: ignore[index]
        if not isinstance(target, syntax.Name):
            raise self.ctx.error("a block axis must be assigned to a single name", target)
        args = list(call.args)
        kwargs = {kw.name: kw.value for kw in call.keywords}
        for key in kwargs:
            if key not in ("dom", "binding", "dtype"):
                hint = did_you_mean(key, ("dom", "binding", "dtype"), quote=True)
                raise self.ctx.error(
                    f"T.axis got an unexpected keyword argument '{key}'{hint}", call
                )
        for key in ("dom", "binding"):
            if key in kwargs:
                args.append(kwargs[key])
        if len(args) != 2:
            raise self.ctx.error(
                f"T.axis expects 2 arguments (dom, binding), got {len(args)}", call
            )
        binding = self.exprs.value(args[1])
        dom_node = args[0]
        declared = self.exprs.dtype_arg(kwargs["dtype"]) if "dtype" in kwargs else None
        if isinstance(dom_node, syntax.Tuple | syntax.List):
            if len(dom_node.elts) != 2:
                raise self.ctx.error("an axis domain tuple must be (min, max)", dom_node)
            lo, hi = self.exprs.value(dom_node.elts[0]), self.exprs.value(dom_node.elts[1])
        else:
            lo, hi = Lit(0, dom_node.span), self.exprs.value(dom_node)
        dtype = declared or _first_dtype(binding, hi, lo) or "int32"
        value = materialize(binding, dtype)
        # TVM gives a bare extent (`T.axis.spatial(1, T.int64(0))`) int32, whatever the binding
        bare = declared is None and isinstance(hi, Lit) and isinstance(lo, Lit)
        low, high = (
            (materialize(lo), materialize(hi))
            if bare
            else (
                materialize(lo, dtype),
                materialize(hi, dtype),
            )
        )
        if not dt.is_integer_like(dtype):
            raise self.ctx.error(f"a block axis must be an integer, got {dtype}", call)
        frame.comments = self.header_comments(frame.comments, f"axis:{len(frame.iter_vars)}")
        self.add_iter_var(
            frame, target, tir.Range(low, difference(high, low), dom_node.span), kind, value
        )

    def remap(self, targets: syntax.Node, call: syntax.Call) -> None:
        """`vi, vj = T.axis.remap("SR", [i, j])`: each binding is an enclosing loop var
        and the axis takes that loop's range."""
        frame = self.direct_block(call, "T.axis.remap")
        if len(call.args) != 2 or call.keywords:
            raise self.ctx.error("T.axis.remap expects 2 arguments (kinds, bindings)", call)
        kinds = self.exprs.str_arg(call.args[0], "the kinds of T.axis.remap")
        bindings = self.fn.buffers.dims(call.args[1])
        names = targets.elts if isinstance(targets, syntax.Tuple) else (targets,)
        if not (len(kinds) == len(bindings) == len(names)):
            raise self.ctx.error(
                f"T.axis.remap binds {len(names)} name(s) with {len(kinds)} kind(s) "
                f"and {len(bindings)} binding(s)",
                call,
            )
        frame.comments = self.header_comments(frame.comments, f"axis:{len(frame.iter_vars)}")
        for letter, binding, target in zip(kinds, bindings, names, strict=True):
            kind = _REMAP_KINDS.get(letter)
            if kind is None:
                raise self.ctx.error(
                    f"unknown axis kind '{letter}' in T.axis.remap (use S or R)", call.args[0]
                )
            value = self.exprs.value(binding)
            if not isinstance(value, tir.Var) or value not in self.fn.loop_ranges:
                raise self.ctx.error(
                    "T.axis.remap bindings must be enclosing loop variables", binding
                )
            dom = self.fn.loop_ranges[value]
            self.add_iter_var(
                frame, target, tir.Range(dom.min, dom.extent, binding.span), kind, value
            )

    def add_iter_var(
        self, frame: BlockFrame, target: syntax.Node, dom: tir.Range, kind: str, value: tir.PrimExpr
    ) -> None:
        if not isinstance(target, syntax.Name):
            raise self.ctx.error("a block axis must be assigned to a name", target)
        if any(iv.var.name == target.id for iv in frame.iter_vars):
            raise self.ctx.error(f"block axis '{target.id}' is defined twice", target)
        var = tir.Var(target.id, value.dtype, span=target.span)
        frame.iter_vars.append(tir.IterVar(var, dom, kind, span=target.span))
        frame.iter_values.append(value)
        self.exprs.define(target.id, var)

    # ------------------------------------------------------------ header statements

    def where(self, call: syntax.Call) -> None:
        frame = self.direct_block(call, "T.where")
        if len(call.args) != 1 or call.keywords:
            raise self.ctx.error(f"T.where expects 1 argument, got {len(call.args)}", call)
        frame.predicate = self.exprs.boolean(
            self.exprs.value(call.args[0]), call.args[0], "T.where predicate"
        )
        frame.comments = self.header_comments(frame.comments, "where")

    def reads_writes(self, call: syntax.Call, which: str) -> None:
        frame = self.direct_block(call, f"T.{which}")
        if call.keywords:
            raise self.ctx.error(f"T.{which} takes no keyword arguments", call.keywords[0])
        regions = self.fn.buffers.regions(call.args)
        if which == "reads":
            frame.reads = (frame.reads or []) + regions
        else:
            frame.writes = (frame.writes or []) + regions
        frame.comments = self.header_comments(frame.comments, which)

    def block_attr(self, call: syntax.Call) -> None:
        frame = self.direct_block(call, "T.block_attr")
        if len(call.args) != 1 or call.keywords:
            raise self.ctx.error(f"T.block_attr expects 1 argument, got {len(call.args)}", call)
        frame.annotations.extend(self.fn.buffers.attr_dict(call.args[0]))
        frame.comments = self.header_comments(frame.comments, "attr")

    # ------------------------------------------------------------ block-level buffers

    def block_alloc(self, name: str, call: syntax.Call) -> tir.Buffer:
        """A block-level allocation: owned by the innermost block, or the root block."""
        named = self.fn.buffers.buffer_args(call, call.args, "T.alloc_buffer")
        buffer = self.fn.buffers.make_buffer(name, named, call)
        if self.fn.blocks:
            frame = self.fn.blocks[-1]
            frame.comments = self.header_comments(frame.comments, f"alloc:{len(frame.allocs)}")
            frame.allocs.append(buffer)
        else:
            role = f"alloc:{len(self.fn.root_allocs)}"
            self.fn.root_comments = self.header_comments(self.fn.root_comments, role)
            self.fn.root_allocs.append(buffer)
        return buffer

    def match_region(self, name: str, call: syntax.Call) -> tir.Buffer:
        """`B = T.match_buffer(A[0:4, i], (4,))` inside a block."""
        frame = self.direct_block(call, "T.match_buffer of a region")
        source = self.fn.buffers.region(call.args[0])
        named = self.fn.buffers.buffer_args(call, call.args[1:], "T.match_buffer")
        shape = None
        dtype = "float32"
        if "shape" not in named:
            shape = tuple(r.extent for r in source.region)
            dtype = source.buffer.dtype
        buffer = implied_offset(
            self.fn.buffers.make_buffer(name, named, call, shape=shape, dtype=dtype), call
        )
        role = f"match:{len(frame.match_buffers)}"
        frame.comments = self.header_comments(frame.comments, role)
        frame.match_buffers.append(tir.MatchBufferRegion(buffer, source, call.span))
        return buffer


def _first_dtype(*values: tir.PrimExpr | Lit) -> str | None:
    for value in values:
        if not isinstance(value, Lit):
            return value.dtype
    return None
