"""`tvms import`: a program saved with `torch.export.save` as a `.tvms` file and its
weights, ready for `tvms build` and `tvms run` (docs/frontend.md).

The weights are constants by default (the text's `metadata[...]` references, their
values in the constants file beside it, `NAME.constants.npz`); with `--keep-params`
they stay parameters of `main` after its data inputs, their values in
`NAME.params.npz` by parameter name, for `--params`."""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

from tvmlite.diagnostics import TVMLiteError

PARAMS_SUFFIX = ".params.npz"


def import_command(args: argparse.Namespace) -> int:
    try:
        import torch
    except ImportError:
        raise TVMLiteError('tvms import needs PyTorch: pip install "tvmlite[torch]"') from None
    from tvmlite.frontend import detach_params, from_exported_program

    source = Path(args.model)
    if not source.is_file():
        raise TVMLiteError(f"{source}: no such file")
    try:
        with warnings.catch_warnings():  # torch's own deprecation notices, not the user's
            warnings.simplefilter("ignore", FutureWarning)
            program = torch.export.load(source)
    except Exception as err:  # noqa: BLE001 - torch's many reasons, one user error
        raise TVMLiteError(
            f"{source}: not a program saved with torch.export.save ({type(err).__name__}: "
            f"{str(err).splitlines()[0] if str(err) else ''})"
        ) from None
    mod = from_exported_program(
        program,
        keep_params_as_input=args.keep_params,
        unwrap_unit_return_tuple=args.unwrap_unit_return_tuple,
        no_bind_return_tuple=args.no_bind_return_tuple,
        run_ep_decomposition=not args.no_decompose,
    )
    out = Path(args.output) if args.output else source.with_suffix(".tvms")
    written = [out]
    if args.keep_params:
        mod, params = detach_params(mod)
        written.append(_save_params(mod, params.get("main", []), out))
    mod.save(out)
    from tvmlite.dsl.metadata import sidecar_path

    if sidecar_path(out).exists() and "metadata[" in out.read_text():
        written.insert(1, sidecar_path(out))
    print(f"wrote {', '.join(str(p) for p in written)}", file=sys.stderr)
    return 0


def _save_params(mod: object, arrays: list, out: Path) -> Path:
    """The weights by name: `main`'s parameters after its `num_input` data inputs."""
    from tvmlite.array_file import save_arrays

    main = mod["main"]  # type: ignore[index]
    names = [p.name for p in main.params[main.attr("num_input") :]]
    path = out.with_name(
        out.name[: -len(out.suffix)] + PARAMS_SUFFIX if out.suffix else out.name + PARAMS_SUFFIX
    )
    save_arrays(path, dict(zip(names, arrays, strict=True)))
    return path
