"""Pass infrastructure: passes, sequences of them, and the context they run in.

A pass is a small frozen dataclass: its fields are its options, `name` says
what it is, and `run(mod) -> mod` is pure. Calling a pass (`p(mod)`) runs it
under the current `PassContext`, which decides whether it runs (opt level,
disabled names), tells the instruments (timing, printing) and, when asked,
verifies the module afterwards. The only mutable global is the context stack,
a `ContextVar`, so threads and tasks each see their own.

What a build does after the passes (generating LLVM IR, LLVM's optimization,
machine code, linking) is not IRModule -> IRModule; each such step runs inside
`stage(name)`, which tells the instruments too, so `--time-passes` accounts
for a whole build.
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, TextIO

from tvmlite.diagnostics import TVMLiteError, VerifyError, did_you_mean
from tvmlite.dsl import relax, tir
from tvmlite.dsl.module import IRModule


@dataclass(frozen=True)
class PassInfo:
    """What instruments see about a running pass."""

    name: str
    opt_level: int = 0
    required: tuple[str, ...] = ()


class PassInstrument:
    """Hooks around every pass run in a context; override what you need."""

    def enter_pass_ctx(self) -> None:
        """Called when the owning PassContext is entered."""

    def exit_pass_ctx(self) -> None:
        """Called when the owning PassContext is left."""

    def should_run(self, mod: IRModule, info: PassInfo) -> bool:
        return True

    def run_before_pass(self, mod: IRModule, info: PassInfo) -> None:
        """Called before a pass runs."""

    def run_after_pass(self, mod: IRModule, info: PassInfo) -> None:
        """Called after a pass ran, with its result."""

    def run_before_stage(self, name: str) -> None:
        """Called before a step that is not a pass (see `stage`)."""

    def run_after_stage(self, name: str) -> None:
        """Called after a step that is not a pass."""


class PassTimingInstrument(PassInstrument):
    """Wall time of every pass and stage (`--time-passes`); nested ones are
    indented under the pass or stage that ran them."""

    def __init__(self) -> None:
        self.records: list[tuple[int, str, float]] = []
        self._starts: list[tuple[int, float]] = []

    def run_before_pass(self, mod: IRModule, info: PassInfo) -> None:
        self.run_before_stage(info.name)

    def run_after_pass(self, mod: IRModule, info: PassInfo) -> None:
        self.run_after_stage(info.name)

    def run_before_stage(self, name: str) -> None:
        self._starts.append((len(self.records), time.perf_counter()))
        self.records.append((len(self._starts) - 1, name, 0.0))

    def run_after_stage(self, name: str) -> None:
        slot, start = self._starts.pop()
        depth, recorded, _ = self.records[slot]
        self.records[slot] = (depth, recorded, time.perf_counter() - start)

    def add(self, name: str, seconds: float) -> None:
        """Record a step timed elsewhere (the CLI's start-up and parse)."""
        self.records.append((len(self._starts), name, seconds))

    def render(self) -> str:
        """One line per pass or stage run: name and milliseconds, nested by depth."""
        return "\n".join(f"{'  ' * d}{n}: {s * 1000:.3f} ms" for d, n, s in self.records)


class PrintAfterAll(PassInstrument):
    """Print the module after every pass (`--print-after-all`)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream

    def run_after_pass(self, mod: IRModule, info: PassInfo) -> None:
        out = self.stream or sys.stdout
        out.write(f"# IR after {info.name}\n{mod.script()}\n")


# The config keys a PassContext accepts and the type of each value (TVM registers
# its options the same way and rejects the rest); `register_config_option` adds one.
CONFIG_OPTIONS: dict[str, type] = {
    "relax.transform.apply_legalize_ops": bool,
    "relax.FuseOps.max_depth": int,
    "tir.instrument_bound_checkers": bool,
    "tir.default_cpu_schedule": bool,
    "tvmlite.memory_plan": bool,
    "tvmlite.build_workers": int,
    "tvmlite.profile": bool,  # host code counts kernel and packed calls (`module.profile`)
}


def register_config_option(key: str, value_type: type) -> None:
    """Let PassContext configs carry `key` with values of `value_type`."""
    if key in CONFIG_OPTIONS and CONFIG_OPTIONS[key] is not value_type:
        known = CONFIG_OPTIONS[key].__name__
        raise TVMLiteError(f"PassContext config '{key}' is already registered as {known}")
    CONFIG_OPTIONS[key] = value_type


def _check_config(config: Any) -> None:
    if not isinstance(config, dict):
        raise TVMLiteError(f"PassContext config must be a dict, got {type(config).__name__}")
    for key, value in config.items():
        expected = CONFIG_OPTIONS.get(key)
        if expected is None:
            known = ", ".join(sorted(CONFIG_OPTIONS))
            hint = did_you_mean(str(key), CONFIG_OPTIONS, quote=True)
            raise TVMLiteError(f"PassContext config: unknown key {key!r}{hint} (known: {known})")
        # bool is an int in Python; an int option still refuses True/False
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            what = "True or False" if expected is bool else f"a {expected.__name__}"
            raise TVMLiteError(f"PassContext config '{key}' must be {what}, got {value!r}")


_STACK: contextvars.ContextVar[tuple[PassContext, ...]] = contextvars.ContextVar(
    "tvmlite_pass_context", default=()
)


@dataclass
class PassContext:
    """How passes run: `opt_level`, `config` options (e.g.
    `relax.transform.apply_legalize_ops`), `instruments`, names of passes to
    skip or always run, and `verify` to check the module after every pass.

    `verify` left at None takes the setting of the enclosing context (off at
    the top), so one `PassContext(verify=True)` around a test or a session
    verifies after every pass run inside it, including passes run under the
    contexts that `build` or the caller enter for their own options."""

    opt_level: int = 2
    config: dict[str, Any] = field(default_factory=dict)
    instruments: Sequence[PassInstrument] = ()
    required_pass: Sequence[str] = ()
    disabled_pass: Sequence[str] = ()
    verify: bool | None = None
    _token: Any = field(default=None, repr=False, compare=False)
    _derived: bool = field(default=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check_config(self.config)

    @staticmethod
    def current() -> PassContext:
        """The innermost entered context, or a default one."""
        stack = _STACK.get()
        return stack[-1] if stack else _DEFAULT

    def __enter__(self) -> PassContext:
        if not self._derived:
            for inst in self.instruments:
                inst.enter_pass_ctx()
        self._token = _STACK.set((*_STACK.get(), self))
        return self

    def __exit__(self, *exc: object) -> None:
        _STACK.reset(self._token)
        if not self._derived:
            for inst in self.instruments:
                inst.exit_pass_ctx()

    def with_config(self, config: dict[str, Any]) -> PassContext:
        """This (entered) context with `config` added to its options, to enter for
        a nested step; its instruments stay entered once, by this context."""
        return replace(self, config={**self.config, **config}, _token=None, _derived=True)

    def get(self, key: str, default: Any = None) -> Any:
        return self.config.get(key, default)

    def verifies(self) -> bool:
        """Whether passes verify their result: this context's `verify`, else the
        innermost enclosing context's that says."""
        if self.verify is not None:
            return self.verify
        for outer in reversed(_STACK.get()):
            if outer.verify is not None:
                return outer.verify
        return False

    def should_run(self, info: PassInfo, mod: IRModule) -> bool:
        if info.name in self.disabled_pass:
            return False
        if info.opt_level > self.opt_level and info.name not in self.required_pass:
            return False
        return all(inst.should_run(mod, info) for inst in self.instruments)


_DEFAULT = PassContext()


@contextlib.contextmanager
def stage(name: str, timings: dict[str, float] | None = None) -> Iterator[None]:
    """Run the block as the build step `name` (code generation, LLVM optimization,
    machine code, linking): the current context's instruments see it begin and
    end, as they see a pass, but there is no module to print or verify.
    `timings`, when given, receives the step's milliseconds under `name`."""
    instruments = PassContext.current().instruments
    for inst in instruments:
        inst.run_before_stage(name)
    start = time.perf_counter()
    try:
        yield
    finally:
        if timings is not None:
            timings[name] = timings.get(name, 0.0) + (time.perf_counter() - start) * 1e3
        for inst in instruments:
            inst.run_after_stage(name)


class Pass:
    """Base of passes. Subclasses are frozen dataclasses defining `run` and a `name`
    field (or property); `opt_level` 0 means the pass always runs."""

    opt_level: int = 0

    @property
    def info(self) -> PassInfo:
        return PassInfo(getattr(self, "name", type(self).__name__), self.opt_level)

    def run(self, mod: IRModule) -> IRModule:
        raise NotImplementedError

    def __call__(self, mod: IRModule) -> IRModule:
        ctx = PassContext.current()
        info = self.info
        if not isinstance(mod, IRModule):  # as in TVM: a lone function goes in a module
            raise TVMLiteError(
                f"pass {info.name} takes an IRModule, got {type(mod).__name__} "
                "(tvmlite.IRModule({'main': func}) makes one)"
            )
        if not ctx.should_run(info, mod):
            return mod
        for inst in ctx.instruments:
            inst.run_before_pass(mod, info)
        result = self.run(mod)
        for inst in ctx.instruments:
            inst.run_after_pass(result, info)
        if ctx.verifies():
            verify(result, info.name)
        return result


@dataclass(frozen=True)
class Sequential(Pass):
    """Run `passes` in order, each under the current context."""

    passes: tuple[Pass, ...] = ()
    name: str = "Sequential"

    def __init__(self, passes: Iterable[Pass] = (), name: str = "Sequential") -> None:
        object.__setattr__(self, "passes", tuple(passes))
        object.__setattr__(self, "name", name)

    def run(self, mod: IRModule) -> IRModule:
        for p in self.passes:
            mod = p(mod)
        return mod


ModuleFn = Callable[[IRModule], IRModule]
FunctionFn = Callable[[Any, IRModule], Any]


@dataclass(frozen=True)
class ModulePass(Pass):
    """A pass made from a function `(mod) -> mod`."""

    func: ModuleFn
    name: str
    opt_level: int = 0

    def run(self, mod: IRModule) -> IRModule:
        return self.func(mod)


@dataclass(frozen=True)
class FunctionPass(Pass):
    """A pass applying `func(function, mod) -> function` to every function of the
    kinds in `kinds` ("relax", "prim"); functions `is_external` says to leave alone
    are skipped, as the design requires of function-level passes."""

    func: FunctionFn
    name: str
    opt_level: int = 0
    kinds: tuple[str, ...] = ("relax", "prim")

    def run(self, mod: IRModule) -> IRModule:
        def one(name: str, f: Any) -> Any:
            return self.func(f, mod) if _kind(f) in self.kinds and not is_external(f) else f

        return map_functions(mod, one)


class PrimFuncPass(Pass):
    """Base of TIR passes that rewrite each prim function on its own: subclasses
    are frozen dataclasses with a `name` and `transform(func) -> func`. A
    TVMLiteError from one function is reported with the function's name."""

    def transform(self, func: tir.PrimFunc) -> tir.PrimFunc:
        raise NotImplementedError

    def run(self, mod: IRModule) -> IRModule:
        def one(name: str, f: Any) -> Any:
            if not isinstance(f, tir.PrimFunc):
                return f
            try:
                return self.transform(f)
            except TVMLiteError as err:
                raise TVMLiteError(f"cannot compile prim function '{name}': {err}") from None

        return map_functions(mod, one)


def map_functions(mod: IRModule, fn: Callable[[str, Any], Any]) -> IRModule:
    """`mod` with every function replaced by `fn(name, function)`; `mod` itself
    when nothing changed."""
    return mod.with_functions({name: fn(name, f) for name, f in mod.functions.items()})


def _kind(f: Any) -> str:
    if isinstance(f, relax.Function):
        return "relax"
    return "prim" if isinstance(f, tir.PrimFunc) else "extern"


# A fused group, which only FuseTIR lowers (into one kernel).
PRIMITIVE = "Primitive"
# A function an external compiler owns (the target kind's hook lowers it; Composite
# marks the pattern functions inside such a one).
EXTERNAL_COMPILER = ("Compiler", "Codegen", "Composite")


def is_external(func: Any) -> bool:
    """Whether graph-level passes leave `func` alone: a Relax function marked as a
    fused group (`Primitive`) or as owned by an external compiler (`Compiler`,
    `Codegen`, `Composite`). Such functions are lifted to module level and marked
    rather than skipped by visitors (DESIGN.md); prim functions never are.
    LegalizeOps alone still legalizes a `Primitive` one's operators, as TVM's does."""
    return isinstance(func, relax.Function) and any(
        func.attr(key) for key in (PRIMITIVE, *EXTERNAL_COMPILER)
    )


def module_pass(name: str | None = None, opt_level: int = 0) -> Callable[[ModuleFn], ModulePass]:
    """Decorator: turn `(mod) -> mod` into a pass."""

    def wrap(fn: ModuleFn) -> ModulePass:
        return ModulePass(fn, name or fn.__name__, opt_level)

    return wrap


def function_pass(
    name: str | None = None, opt_level: int = 0, kinds: tuple[str, ...] = ("relax", "prim")
) -> Callable[[FunctionFn], FunctionPass]:
    """Decorator: turn `(function, mod) -> function` into a pass over every function."""

    def wrap(fn: FunctionFn) -> FunctionPass:
        return FunctionPass(fn, name or fn.__name__, opt_level, kinds)

    return wrap


def verify(mod: IRModule, after: str | None = None) -> None:
    """Check every function of `mod` with the TIR and Relax verifiers; raises
    VerifyError, whose message starts with the pass named by `after` (the
    between-pass hook)."""
    from tvmlite.dsl.verify.relax import verify_module
    from tvmlite.dsl.verify.tir import verify_prim_func

    try:
        for f in mod.functions.values():
            if isinstance(f, tir.PrimFunc):
                verify_prim_func(f)
        verify_module(mod)
    except VerifyError as error:
        if after is None:
            raise
        message = f"the module after pass {after} is invalid: {error.message}"
        raise VerifyError(message, error.span, error.filename) from error
