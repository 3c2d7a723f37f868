"""Importing models: `from_exported_program` turns a `torch.export.ExportedProgram`
into an IRModule as TVM 0.27's PyTorch frontend does, without TVM.

    ep = torch.export.export(model, (x,))
    mod = tvmlite.frontend.from_exported_program(ep)
    mod, params = tvmlite.frontend.detach_params(mod)   # with keep_params_as_input=True

Torch is an optional dependency (`pip install "tvmlite[torch]"`): it is imported when
a program is imported, never by `import tvmlite` or `import tvmlite.frontend`.
"""

from __future__ import annotations

from typing import Any

from tvmlite.dsl.module import IRModule
from tvmlite.frontend.params import detach_params


def from_exported_program(
    exported_program: Any,
    *,
    keep_params_as_input: bool = False,
    unwrap_unit_return_tuple: bool = False,
    no_bind_return_tuple: bool = False,
    run_ep_decomposition: bool = True,
) -> IRModule:
    """The IRModule TVM 0.27's `from_exported_program` makes of `exported_program`,
    with the same options: `keep_params_as_input` keeps the weights as parameters of
    `main` after its `num_input` data inputs (their values in the `params` attribute,
    see `detach_params`), else they are bound as constants; buffers and constant
    tensors are always constants. `unwrap_unit_return_tuple` returns a lone output
    bare; `no_bind_return_tuple` returns the outputs' tuple unbound;
    `run_ep_decomposition` first decomposes the program to core ATen operators, as
    TVM does by default."""
    try:
        import torch  # noqa: F401
    except ImportError as err:
        raise ImportError(
            'from_exported_program needs PyTorch: pip install "tvmlite[torch]"'
        ) from err
    from tvmlite.frontend.exported_program import from_exported_program as translate

    return translate(
        exported_program,
        keep_params_as_input=keep_params_as_input,
        unwrap_unit_return_tuple=unwrap_unit_return_tuple,
        no_bind_return_tuple=no_bind_return_tuple,
        run_ep_decomposition=run_ep_decomposition,
    )


__all__ = ["detach_params", "from_exported_program"]
