"""Targets: what `build` compiles for, as data (`Target`), and the registry of
target kinds with their hooks (`register_target_kind`).

    Target("llvm")                                   # the host CPU
    Target("llvm -mcpu=skylake-avx512 -mattr=+fma")  # another CPU or feature set
    Target("llvm -mtriple=aarch64-linux-gnu")        # another machine (cross-compiled)
    Target("llvm -libs=blas")                        # and offload matmuls to BLAS

A kind is a name plus hooks, so adding one (a library, an accelerator, a toy in
a test) touches no central code. A kind may register passes to run at the
named points of the build flow (`POINTS`), its own default pipeline, a
`relax_to_tir` module pass that lowers the graph functions tagged
`Compiler="<kind>"` its own way (before the pipeline legalizes what it left),
and a `tir_to_runtime` hook that generates code for the prim functions tagged
`"target": "<kind>"` instead of LLVM (the kind's kernel compiler). `lower()`
runs the hooks as the passes RelaxToTIR and TIRToRuntime. All of it is read
from the IRModule's attributes, and the code a kind's compiler returns travels
with the module (`IRModule.external_code`) into what is built from it: no side
tables, nothing registered process-wide.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tvmlite.diagnostics import TVMLiteError, did_you_mean
from tvmlite.dsl import tir
from tvmlite.dsl.module import IRModule
from tvmlite.lowering.transform import Pass

if TYPE_CHECKING:  # imported where used: codegen imports LLVM
    from tvmlite.lowering.codegen.cpu_traits import CPUTraits

# Points of the build flow where a kind's passes run, in order (docs/extending.md):
# on Relax operators; on legalized (and fused) call_tir and prim functions; at the
# schedule point, on the prim functions LLVM compiles, still with blocks
# (pipeline.schedule); inside LowerTIR, on loop nests over buffers that still have
# their dims; on the lowered module codegen consumes.
POINTS = ("before_legalize", "after_legalize", "schedule", "lower_tir", "before_codegen")
# Options every kind understands; a kind lists any others it accepts.
COMMON_OPTIONS = ("mtriple", "mcpu", "mattr", "opt-level", "libs", "keys")

PassFactory = Callable[["Target"], Pass]
RelaxToTir = Callable[["Target"], Pass]
# What tir_to_runtime returns per prim function: a Python callable (NumPy arrays
# in, destination-passing), a ctypes function with the packed signature, or the
# address of a native packed function (docs/abi.md).
TirToRuntime = Callable[[IRModule, "Target"], Mapping[str, Any]]


@dataclass(frozen=True)
class TargetKind:
    """A registered kind: its hooks and the extra `-options` it accepts."""

    name: str
    passes: Mapping[str, tuple[PassFactory, ...]] = field(default_factory=dict)
    relax_to_tir: RelaxToTir | None = None
    tir_to_runtime: TirToRuntime | None = None
    options: tuple[str, ...] = ()
    pipeline: str | None = None


_KINDS: dict[str, TargetKind] = {}


def register_target_kind(
    name: str,
    *,
    passes: Mapping[str, Sequence[PassFactory]] | None = None,
    relax_to_tir: RelaxToTir | None = None,
    tir_to_runtime: TirToRuntime | None = None,
    options: Sequence[str] = (),
    pipeline: str | None = None,
    override: bool = False,
) -> TargetKind:
    """Register kind `name`. `passes` maps points of `POINTS` to functions
    `(target) -> Pass`; `relax_to_tir(target)` returns a module pass lowering
    the functions tagged `Compiler=name`; `tir_to_runtime(mod, target)` returns
    code for the prim functions of `mod` (those tagged `"target": name`) by name;
    `pipeline` names the registered pipeline a build for this kind runs when none
    is given (and for TVM's `relax_pipeline="default"`)."""
    if name in _KINDS and not override:
        raise TVMLiteError(f"target kind '{name}' already exists (override=True replaces it)")
    for point in passes or {}:
        if point not in POINTS:
            raise TVMLiteError(f"unknown point '{point}' (points: {', '.join(POINTS)})")
    kind = TargetKind(
        name,
        {p: tuple(fs) for p, fs in (passes or {}).items()},
        relax_to_tir,
        tir_to_runtime,
        tuple(options),
        pipeline,
    )
    _KINDS[name] = kind
    return kind


def unregister_target_kind(name: str) -> None:
    _KINDS.pop(name, None)


def get_target_kind(name: str) -> TargetKind:
    kind = _KINDS.get(name)
    if kind is None:
        known = ", ".join(sorted(_KINDS))
        hint = did_you_mean(name, _KINDS, quote=True)
        raise TVMLiteError(
            f"unsupported target '{name}': no such target kind{hint} (known: {known})"
        )
    return kind


def kind_of(tag: object) -> str | None:
    """The target kind a function's `target` attribute names: `"llvm -mcpu=..."`, a
    `T.target({"kind": "cuda", ...})` or `T.target("cuda")`; None when it names none."""
    if isinstance(tag, tir.TargetAttr):
        if isinstance(tag.config, str):
            return tag.config.split()[0] if tag.config.split() else None
        kind = dict(tag.config.items).get("kind")
        return kind if isinstance(kind, str) else None
    if isinstance(tag, str) and tag.split():
        return tag.split()[0]
    return None


def list_target_kinds() -> list[str]:
    return sorted(_KINDS)


@dataclass(frozen=True)
class Target:
    """A kind plus options, parsed from `"kind -key=value -flag"`.

    `mtriple` (None: the host's), `mcpu`, `mattr` (features, `+avx2` / `-fma`)
    and `opt_level` go to the LLVM target machine; `traits` is what the schedule
    rules read of that machine (vector width, registers, caches); `libs` names
    further kinds whose hooks run too (`-libs=blas`); any other option the kind
    accepts lands in `attrs`."""

    kind: str
    mtriple: str | None = None
    mcpu: str | None = None
    mattr: tuple[str, ...] = ()
    opt_level: int | None = None
    libs: tuple[str, ...] = ()
    attrs: tuple[tuple[str, str | bool], ...] = ()

    def __init__(self, spec: str | Target = "llvm", **options: Any) -> None:
        if isinstance(spec, Target):
            values = dict(spec.__dict__)
        else:
            values = _parse(spec)
        unknown = sorted(set(options) - _FIELDS)
        if unknown:
            hint = did_you_mean(unknown[0], _FIELDS, quote=True)
            raise TypeError(f"Target() got an unexpected keyword argument {unknown[0]!r}{hint}")
        values.update(options)
        for key, value in values.items():
            object.__setattr__(self, key, value)
        get_target_kind(self.kind)
        for lib in self.libs:
            get_target_kind(lib)
        self._check_machine()

    def _check_machine(self) -> None:
        """Values LLVM would abort on are errors now (codegen/machine_check.py)."""
        if self.opt_level is not None and (
            isinstance(self.opt_level, bool)
            or not isinstance(self.opt_level, int)
            or not 0 <= self.opt_level <= 3
        ):
            raise TVMLiteError(f"target opt_level must be 0 to 3, got {self.opt_level!r}")
        if isinstance(self.mattr, str):  # Target("llvm", mattr="+avx2,-fma")
            object.__setattr__(self, "mattr", tuple(f for f in self.mattr.split(",") if f))
        from tvmlite.lowering.codegen.target import check_triple, checked_machine

        if self.mtriple is not None:
            check_triple(self.mtriple)
        if self.mcpu is not None or self.mattr or self.mtriple is not None:
            checked_machine(self.machine_options())

    @staticmethod
    def of(target: str | Target | None) -> Target:
        """`target` as a Target (None: the host)."""
        if target is None:
            return Target("llvm")
        if isinstance(target, Target):
            return target
        if isinstance(target, str):
            return Target(target)
        raise TVMLiteError(f"a target is a string or a Target, got {type(target).__name__}")

    @property
    def kinds(self) -> tuple[TargetKind, ...]:
        """The kind, then every kind of `libs`: whose passes run, in that order."""
        return tuple(get_target_kind(n) for n in (self.kind, *self.libs))

    def passes_at(self, point: str) -> list[Pass]:
        """Fresh passes every kind of this target inserts at `point`."""
        if point not in POINTS:
            raise TVMLiteError(f"unknown point '{point}' (points: {', '.join(POINTS)})")
        return [make(self) for kind in self.kinds for make in kind.passes.get(point, ())]

    @property
    def named_pipeline(self) -> str | None:
        """The pipeline the first of `kinds` that names one names, else None."""
        return next((k.pipeline for k in self.kinds if k.pipeline), None)

    @property
    def default_pipeline(self) -> str:
        """The pipeline a build runs when given none: the one a kind names, else
        "fast" (lowering/pipeline.py)."""
        return self.named_pipeline or "fast"

    def attr(self, key: str, default: Any = None) -> Any:
        return dict(self.attrs).get(key, default)

    def machine_options(self) -> Any:
        """The codegen machine this target asks for (lowering/codegen/target.py)."""
        from tvmlite.lowering.codegen.target import MachineOptions

        features = ",".join(self.mattr) or None
        return MachineOptions(self.mcpu, features, self.opt_level, self.mtriple)

    @property
    def traits(self) -> CPUTraits:
        """The machine as the schedule rules see it (lowering/codegen/cpu_traits.py)."""
        from tvmlite.lowering.codegen.cpu_traits import cpu_traits

        return cpu_traits(self.machine_options())

    def __str__(self) -> str:
        parts = [self.kind]
        if self.mtriple:
            parts.append(f"-mtriple={self.mtriple}")
        if self.mcpu:
            parts.append(f"-mcpu={self.mcpu}")
        if self.mattr:
            parts.append(f"-mattr={','.join(self.mattr)}")
        if self.opt_level is not None:
            parts.append(f"-opt-level={self.opt_level}")
        if self.libs:
            parts.append(f"-libs={','.join(self.libs)}")
        parts += [f"-{k}" if v is True else f"-{k}={v}" for k, v in self.attrs]
        return " ".join(parts)


_FIELDS = frozenset(("kind", "mtriple", "mcpu", "mattr", "opt_level", "libs", "attrs"))


def _parse(spec: str) -> dict[str, Any]:
    words = shlex.split(spec) if isinstance(spec, str) else []
    if not words or words[0].startswith("-"):
        raise TVMLiteError(f"target {spec!r} must start with a kind name, e.g. 'llvm'")
    kind = get_target_kind(words[0])
    values: dict[str, Any] = {"kind": words[0]}
    attrs: list[tuple[str, str | bool]] = []
    for word in words[1:]:
        key, eq, value = word.lstrip("-").partition("=")
        if not word.startswith("-") or not key:
            raise TVMLiteError(f"target {spec!r}: option {word!r} is not '-key=value'")
        if key not in COMMON_OPTIONS and key not in kind.options:
            known = ", ".join(sorted({*COMMON_OPTIONS, *kind.options}))
            hint = did_you_mean(f"-{key}", [f"-{k}" for k in (*COMMON_OPTIONS, *kind.options)])
            raise TVMLiteError(f"target {spec!r}: unknown option -{key}{hint} (known: {known})")
        if key in ("mtriple", "mcpu", "mattr", "libs", "opt-level") and not value:
            raise TVMLiteError(f"target {spec!r}: -{key} needs a value (-{key}=...)")
        if key == "mtriple":
            values["mtriple"] = value
        elif key == "mcpu":
            values["mcpu"] = value
        elif key == "mattr":
            values["mattr"] = tuple(f for f in value.split(",") if f)
        elif key == "libs":
            values["libs"] = tuple(n for n in value.split(",") if n)
        elif key == "opt-level":
            if not value.isdigit() or int(value) > 3:
                raise TVMLiteError(f"target {spec!r}: -opt-level must be 0 to 3")
            values["opt_level"] = int(value)
        else:
            attrs.append((key, value if eq else True))
    values["attrs"] = tuple(attrs)
    return values


# ------------------------------------------------------------ running the hooks


@dataclass(frozen=True)
class RelaxToTIR(Pass):
    """Run the `relax_to_tir` hook of every kind named by a `Compiler` attribute;
    each must lower (and remove) the functions tagged with its name."""

    target: Target
    name: str = "RelaxToTIR"

    def run(self, mod: IRModule) -> IRModule:
        return _run_relax_to_tir(mod, self.target)


@dataclass(frozen=True)
class TIRToRuntime(Pass):
    """Give each kind with a `tir_to_runtime` hook its prim functions; their
    `call_tir`s become native packed calls of the code it returns, which the
    module carries (`IRModule.external_code`)."""

    target: Target
    name: str = "TIRToRuntime"

    def run(self, mod: IRModule) -> IRModule:
        return _run_tir_to_runtime(mod, self.target)


def _run_relax_to_tir(mod: IRModule, target: Target) -> IRModule:
    """TVM's RunCodegen: each function tagged `Compiler` or `Codegen` goes to the
    `relax_to_tir` hook of the kind it names; a `Composite` function left outside
    one is an error (nothing would compile its operators)."""
    from tvmlite.dsl import relax
    from tvmlite.lowering.passes.partition_for_compiler import compiler_of

    tagged: dict[str, str] = {}
    for name, f in mod.functions.items():
        compiler = compiler_of(f) if isinstance(f, relax.Function) else None
        if compiler is not None:
            tagged.setdefault(compiler, name)
    for compiler, example in tagged.items():
        kind = _KINDS.get(compiler)
        if kind is None or kind.relax_to_tir is None:
            why = "is registered" if kind is None else "has a relax_to_tir hook"
            raise TVMLiteError(
                f"function '{example}' is for the codegen \"{compiler}\" (Compiler/Codegen "
                f"attribute), but no target kind '{compiler}' {why} "
                "(tvmlite.lowering.register_target_kind)"
            )
        mod = kind.relax_to_tir(target)(mod)
        for name, f in mod.functions.items():
            if isinstance(f, relax.Function) and compiler_of(f) == compiler:
                raise TVMLiteError(
                    f"relax_to_tir of target kind '{compiler}' left function '{name}' unlowered"
                )
    for name, f in mod.functions.items():
        if isinstance(f, relax.Function) and f.attr("Composite"):
            raise TVMLiteError(
                f"function '{name}' is a Composite function (pattern "
                f"'{f.attr('Composite')}') outside any Codegen function: no codegen consumes "
                "it (wrap it in a function tagged Codegen, e.g. TVM's FuseOpsByPattern with "
                "annotate_codegen=True, or drop the Composite attribute to legalize it)"
            )
    return mod


def _run_tir_to_runtime(mod: IRModule, target: Target) -> IRModule:
    """Give each kind with a `tir_to_runtime` hook its prim functions (tagged
    `"target": kind`, or untagged when the build target is that kind), keep the
    code it returns with the module (`external_code`, by symbol) and call that
    instead (R.call_tir becomes R.call_dps_packed, run natively through the
    host's packed table, which the built module binds to the code). Functions
    the hook returns no code for are left to LLVM."""
    from tvmlite.dsl import tir

    assigned: dict[str, dict[str, Any]] = {}
    for name, f in mod.functions.items():
        if isinstance(f, tir.PrimFunc):
            kind_name = kind_of(f.attr("target")) or target.kind
            assigned.setdefault(kind_name, {})[name] = f
    for kind_name, funcs in assigned.items():
        kind = get_target_kind(kind_name)
        if kind.tir_to_runtime is None:
            if kind_name != target.kind and kind_name != "llvm":
                raise TVMLiteError(
                    f"prim function '{next(iter(funcs))}' is for target '{kind_name}', "
                    "which has no tir_to_runtime hook"
                )
            continue
        sub = IRModule(funcs, dialect=mod.dialect)
        code = kind.tir_to_runtime(sub, target)
        mod = _call_packed_instead(mod, kind_name, funcs, code)
    return mod


def _call_packed_instead(
    mod: IRModule, kind: str, funcs: Mapping[str, Any], code: Mapping[str, Any]
) -> IRModule:
    from tvmlite.dsl import relax
    from tvmlite.dsl.call_tir import CallTIR
    from tvmlite.dsl.structural import structural_hash
    from tvmlite.lowering.passes.partition_for_compiler import map_bindings

    symbols: dict[str, str] = {}
    external = dict(mod.external_code)
    for name, func in funcs.items():
        if name not in code:
            continue  # declined: LLVM compiles it
        # Same kind, name and IR: same code, so rebuilding may reuse the name.
        symbols[name] = f"tvmlite.{kind}.{name}.{structural_hash(func) & 0xFFFFFFFF:08x}"
        external[symbols[name]] = code[name]

    def rewrite(binding: relax.Binding) -> relax.Binding:
        view = CallTIR.of(binding.value)
        symbol = symbols.get(view.callee.name) if view is not None else None
        if view is None or symbol is None:
            return binding
        # symbolic vars travel as one more (int64 shape) argument
        extra = () if view.tir_vars is None else (view.tir_vars,)
        args = relax.Tuple((*view.args, *extra))
        call = relax.Call(
            relax.Op("relax.call_dps_packed"),
            (relax.ExternFunc(symbol), args),
            (),
            (view.out_sinfo,),
        )
        return relax.VarBinding(binding.var, call, binding.span)

    functions = {
        n: map_bindings(f, rewrite) if isinstance(f, relax.Function) else f
        for n, f in mod.functions.items()
        if n not in symbols
    }
    return mod.with_functions(functions).replace(external_code=external)


register_target_kind("llvm")
