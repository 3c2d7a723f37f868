"""The `tvms` command line: every sub-command, its options, its description and
an example (what `tvms CMD --help` prints). Parsing only: the commands live in
cli.py, cli_build.py and cli_run.py.
"""

from __future__ import annotations

import argparse

from tvmlite.dsl.module import DIALECTS

USAGE = 2  # exit code of a malformed command line
EMITS = ("so", "obj", "ll", "asm", "relax", "tir")
DEFAULT_DIM = 4
OPT_LEVELS = (0, 1, 2, 3)


class UsageError(Exception):
    """A malformed command line the parser could not see (exit code 2)."""


def _command(
    sub: argparse._SubParsersAction, name: str, summary: str, description: str, examples: str
) -> argparse.ArgumentParser:
    return sub.add_parser(
        name,
        help=summary,
        description=description,
        epilog="examples:\n" + examples,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The top-level parser and each sub-command's parser by name."""
    from tvmlite import __version__

    top = argparse.ArgumentParser(
        prog="tvms",
        description="Check, format, show, build and run TVMScript (.tvms) files; import "
        "PyTorch programs.",
        epilog="Run 'tvms COMMAND --help' for a command's options and examples.\n"
        "Exit codes: 0 success, 1 errors found, 2 usage, 3 internal error, 130 interrupted.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    top.add_argument("--version", action="version", version=f"tvms (tvmlite) {__version__}")
    top.add_argument("--traceback", action="store_true", help="show tracebacks of internal errors")
    sub = top.add_subparsers(dest="command", metavar="COMMAND", required=True)
    commands = {
        "check": _check(sub),
        "fmt": _fmt(sub),
        "show": _show(sub),
        "build": _build(sub),
        "run": _run(sub),
        "import": _import(sub),
        "cache": _cache(sub),
    }
    return top, commands


def _check(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = _command(
        sub,
        "check",
        "parse and verify files",
        "Parse and verify .tvms files (directories: every *.tvms under them): TVM's\n"
        "well-formedness check, and shapes and dtypes certain from the annotations.\n"
        "With --target, also every step of 'tvms build' for that target up to its\n"
        "LLVM IR (buffer accesses certain to be out of bounds, legalization, the\n"
        "schedule, TIR lowering), so what passes builds. Each error as\n"
        "file:line:col: error: ..., then one summary line.",
        "  tvms check model.tvms\n  tvms check models/ --target llvm\n",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="files, directories, or - for stdin")
    _constants_option(p)
    p.add_argument(
        "--target",
        default=None,
        help='also lower for this target, as tvms build would (e.g. llvm, "llvm -mcpu=skylake")',
    )
    p.add_argument("--pipeline", default=None, help="pipeline name, with --target")
    p.add_argument("--no-legalize", action="store_true", help="do not run LegalizeOps")
    return p


def _fmt(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = _command(
        sub,
        "fmt",
        "rewrite files in canonical form",
        "Rewrite .tvms files in place as TVM prints them (directories: every\n"
        "*.tvms under them), keeping every comment beside its statement. A file\n"
        "that does not parse, or has a comment that cannot be kept (inside a\n"
        "multi-line expression), is left untouched, with a located error.",
        "  tvms fmt model.tvms\n"
        "  tvms fmt --check models/      # CI: exit 1 if a file would change\n"
        "  tvms fmt --diff --dialect tvm-0.27 model.tvms\n",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="files, directories, or - for stdin")
    p.add_argument("--check", action="store_true", help="exit 1 if a file would change")
    p.add_argument("--diff", action="store_true", help="print a diff instead of rewriting")
    p.add_argument("--stdout", action="store_true", help="print instead of rewriting")
    p.add_argument("--dialect", choices=DIALECTS, help="spelling to print (default: as read)")
    _constants_option(p)
    return p


def _show(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = _command(
        sub,
        "show",
        "print a file highlighted",
        "Print a .tvms file in canonical form, highlighted on a terminal (plain\n"
        "when piped or with NO_COLOR or TERM=dumb; FORCE_COLOR forces colour).",
        "  tvms show model.tvms\n  tvms show model.tvms --after LegalizeOps\n"
        "  tvms show -n model.tvms --width 0\n"
        "  tvms show model.tvms --dialect classic --color never\n",
    )
    p.add_argument("file", metavar="FILE", help=".tvms file, or - for stdin")
    p.add_argument("--dialect", choices=DIALECTS, help="spelling to print (default: as read)")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    p.add_argument("-n", "--line-numbers", action="store_true", help="number the lines")
    p.add_argument(
        "--width",
        type=_width,
        default=100,
        metavar="N",
        help="one parameter a line in signatures longer than N characters (0: never; default 100)",
    )
    p.add_argument("--after", metavar="PASS", help="show the module right after this pass")
    _build_options(p)
    return p


def _width(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a number of characters, got {text!r}")
    return int(text)


def _build(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = _command(
        sub,
        "build",
        "compile a file to a shared library (or IR, asm...)",
        "Compile a .tvms file. What is written follows OUT's suffix (.so library\n"
        "and its .h header, .o object, .ll LLVM IR, .s assembly, .tvms the module\n"
        "tvmlite.lower returns) or --emit; another suffix needs --emit.",
        "  tvms build model.tvms -o model.so\n  tvms build model.tvms -o - --emit ll -O2\n"
        '  tvms build model.tvms -o model.so --target "llvm -mcpu=skylake"\n'
        '  tvms build model.tvms -o model.o --target "llvm -mtriple=aarch64-linux-gnu"\n'
        "  tvms build model.tvms -o libnet.so --prefix net_   # net_entry_main, ...\n"
        "  tvms build resnet.tvms --params weights.npz -o resnet.so   # weights compiled in\n",
    )
    p.add_argument("file", metavar="FILE", help=".tvms file, or - for stdin")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="output file (- stdout)")
    p.add_argument("--emit", choices=EMITS, help="what to write (default: from OUT's suffix)")
    p.add_argument(
        "--prefix",
        help="start of every symbol a library exports (default: from OUT, model_ for model.so)",
    )
    p.add_argument(
        "--time-passes", action="store_true", help="time every pass and build stage (stderr)"
    )
    p.add_argument("--print-after-all", action="store_true", help="print IR after each pass")
    p.add_argument(
        "--profiled", action="store_true",
        help="count and time every kernel and packed call, for 'tvms run LIB --profile' "
        "(the PassContext config tvmlite.profile)",
    )  # fmt: skip
    _build_options(p)
    return p


def _run(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = _command(
        sub,
        "run",
        "call a function of a file or a built library",
        "Call one function of a .tvms file (built through the compile cache) or of\n"
        "a library written by 'tvms build', on inputs from .npy/.npz files or drawn\n"
        "at random from its signature; print, save (--output), time (--repeat) or\n"
        "profile (--profile: time per kernel, packed function and host) it.",
        "  tvms run model.so --random --dim n=8\n"
        "  tvms run model.tvms --input x=x.npy --random --output out.npz\n"
        "  tvms run model.so --input x=out.npz:result --random --repeat 100\n"
        "  tvms run model.tvms --random --profile --repeat 10\n"
        "  tvms run resnet.tvms --params weights.npz --input image.npz\n",
    )
    p.add_argument("file", metavar="FILE|LIB", help=".tvms file (- for stdin) or a built .so")
    p.add_argument("--entry", default="main", help="function to call (default: main)")
    p.add_argument(
        "--input", action="append", default=[], metavar="NAME=FILE|FILE.npz",
        help="a parameter's value: FILE.npy, FILE.npz (its one array, the array NAME, "
        "or FILE.npz:KEY); or FILE.npz alone: each of its arrays names a parameter",
    )  # fmt: skip
    p.add_argument(
        "--random", action="store_true",
        help="draw missing inputs at random (weights, the parameters after num_input, "
        "scaled by their fan-in)",
    )  # fmt: skip
    p.add_argument(
        "--dim", action="append", default=[], metavar="NAME=N",
        help=f"a symbolic dim's value for --random (default {DEFAULT_DIM})",
    )  # fmt: skip
    p.add_argument("--seed", type=int, default=0, help="seed of --random")
    p.add_argument("--output", metavar="OUT.npz", help="save results instead of printing them")
    p.add_argument(
        "--repeat", type=int, default=0, metavar="N",
        help="time N calls: their median, min, max, std and mean (with --profile: profile N)",
    )  # fmt: skip
    p.add_argument(
        "--profile", nargs="?", const="table", choices=("table", "json"), metavar="json",
        help="print where a call spends its time (calls, total, share of each kernel, packed "
        "function and the host), as a table or, with --profile json, as JSON",
    )  # fmt: skip
    _build_options(p)
    return p


def _import(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = _command(
        sub,
        "import",
        "import a PyTorch program (torch.export.save) as .tvms",
        "Import a program saved with torch.export.save as a .tvms file, as TVM 0.27's\n"
        'from_exported_program imports it (needs PyTorch: pip install "tvmlite[torch]").\n'
        "The weights become constants, their values in NAME.constants.npz beside the\n"
        "text; with --keep-params they stay parameters of main after its data inputs,\n"
        "their values in NAME.params.npz (for build and run --params).",
        "  tvms import model.pt2 -o model.tvms\n"
        "  tvms run model.tvms --random\n"
        "  tvms import model.pt2 -o model.tvms --keep-params\n"
        "  tvms build model.tvms --params model.params.npz -o model.so\n",
    )
    p.add_argument("model", metavar="MODEL", help="a program saved with torch.export.save")
    p.add_argument("-o", "--output", metavar="FILE", help="the .tvms to write (default MODEL.tvms)")
    p.add_argument(
        "--keep-params", action="store_true", help="weights as parameters of main, not constants"
    )
    p.add_argument(
        "--no-decompose",
        action="store_true",
        help="import the program as saved, without PyTorch's core ATen decompositions",
    )
    p.add_argument(
        "--unwrap-unit-return-tuple", action="store_true", help="return a lone output bare"
    )
    p.add_argument(
        "--no-bind-return-tuple", action="store_true", help="return the outputs' tuple unbound"
    )
    return p


def _cache(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = _command(
        sub,
        "cache",
        "show or clear the compile cache",
        "Where the compile cache is, how much it holds and its size cap\n"
        "($TVMLITE_CACHE_SIZE, default 1G: least recently used entries go first);\n"
        "or remove every entry.",
        "  tvms cache info\n  tvms cache clear\n  TVMLITE_CACHE_SIZE=200M tvms cache info\n",
    )
    p.add_argument("action", choices=("info", "clear"), help="info: show it; clear: empty it")
    return p


def _constants_option(p: argparse.ArgumentParser) -> None:
    """--constants, for every command that reads text."""
    p.add_argument(
        "--constants", metavar="FILE.npz",
        help="values of the text's metadata[...] constants (default: NAME.constants.npz "
        "beside NAME.tvms)",
    )  # fmt: skip


def _build_options(p: argparse.ArgumentParser) -> None:
    """Options build, run and show --after share."""
    _constants_option(p)
    p.add_argument(
        "--params", metavar="FILE.npz",
        help="bind main's weights to the arrays of FILE.npz, by parameter name",
    )  # fmt: skip
    p.add_argument("--target", default="llvm", help='target, e.g. "llvm -mcpu=skylake"')
    p.add_argument(
        "--pipeline", default=None, help="pipeline name (fast when omitted, minimal, default, ...)"
    )
    p.add_argument("--no-legalize", action="store_true", help="do not run LegalizeOps")
    p.add_argument(
        "--checked", action="store_true", help="bounds-check every buffer access (slower)"
    )
    p.add_argument("--no-cache", action="store_true", help="do not use the compile cache")
    p.add_argument(
        "-O", dest="opt", type=int, choices=OPT_LEVELS, metavar="LEVEL",
        help="LLVM optimization level 0-3, as -O2 or -O 2 (default 3)",
    )  # fmt: skip
