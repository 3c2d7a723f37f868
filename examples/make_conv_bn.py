"""How conv_bn.* were made (needs torch and Apache TVM 0.27; the tests need neither).

A convolution, BatchNorm (running statistics: module buffers) and a buffer of its own,
exported with torch.export and imported by TVM's frontend with the weights as parameters
(`keep_params_as_input=True`): TVM keeps the buffers as constants and prints them as
`metadata["ir.GenericConst"][i]`. Writes, next to this file:

  conv_bn.tvms             mod.script() as TVM printed it
  conv_bn.constants.npz    the constants, by examples/tvm_constants.py (docs/constants.md)
  conv_bn.params.npz       the weights, keyed by main's parameter names
  conv_bn.io.npz           x (the input) and out (PyTorch's output)
"""

import sys
from pathlib import Path

import numpy as np
import torch
import tvm
from tvm import relax
from tvm.relax.frontend.torch import from_exported_program

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from tvm_constants import save_constants  # noqa: E402


class ConvBN(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.register_buffer("scale", torch.tensor([2.0, 0.5, 1.0, -1.0]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn(self.conv(x))) * self.scale.reshape(1, 4, 1, 1)


def main() -> None:
    torch.manual_seed(0)
    model = ConvBN().eval()
    with torch.no_grad():
        model.bn.running_mean.copy_(torch.randn(4))
        model.bn.running_var.copy_(torch.rand(4) + 0.5)
    x = torch.randn(1, 3, 8, 8)
    ep = torch.export.export(model, (x,))
    mod, _ = relax.frontend.detach_params(from_exported_program(ep, keep_params_as_input=True))
    (HERE / "conv_bn.tvms").write_text(mod.script())
    save_constants(mod, str(HERE / "conv_bn.constants.npz"))
    names = [str(p.name) for p in mod["main"].params][1:]  # 0.27: Var.name
    weights = [model.conv.weight, model.conv.bias, model.bn.weight, model.bn.bias]
    arrays = {n: w.detach().numpy() for n, w in zip(names, weights, strict=True)}
    np.savez(HERE / "conv_bn.params.npz", **arrays)
    with torch.no_grad():
        np.savez(HERE / "conv_bn.io.npz", x=x.numpy(), out=model(x).numpy())
    print(tvm.__version__, "wrote conv_bn.* in", HERE)


if __name__ == "__main__":
    main()
