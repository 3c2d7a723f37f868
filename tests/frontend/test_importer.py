"""from_exported_program's options and contracts: weights as constants or parameters,
detach_params, return conventions, symbolic dims, errors, and the optional
dependency on torch."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tvmlite  # noqa: E402
from tvmlite.dsl import relax, tir  # noqa: E402
from tvmlite.frontend import detach_params, from_exported_program  # noqa: E402
from tvmlite.frontend.errors import FrontendError, UnsupportedOperatorsError  # noqa: E402


class Net(torch.nn.Module):
    """A linear layer, a batch norm (running statistics are buffers) and a ReLU."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.fc = torch.nn.Linear(6, 4)
        self.bn = torch.nn.BatchNorm1d(4)
        self.bn.running_mean.uniform_(-0.5, 0.5)
        self.bn.running_var.uniform_(0.5, 1.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn(self.fc(x)))


@pytest.fixture(scope="module")
def program():
    model = Net().eval()
    x = torch.randn(3, 6, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        want = model(x).numpy()
    return torch.export.export(model, (x,)), x.numpy(), want


def _main(mod: tvmlite.IRModule) -> relax.Function:
    return mod["main"]


def test_weights_and_buffers_become_constants(program):
    ep, x, want = program
    mod = from_exported_program(ep)
    main = _main(mod)
    assert [p.name for p in main.params] == ["x"]
    assert main.attr("num_input") is None
    got = tvmlite.build(mod)["main"](x)
    np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-6)


def test_keep_params_as_input(program):
    ep, x, want = program
    mod = from_exported_program(ep, keep_params_as_input=True)
    main = _main(mod)
    names = [p.name for p in main.params]
    # the data input, then the parameters; the buffers stay constants
    assert names == ["x", "p_fc_weight", "p_fc_bias", "p_bn_weight", "p_bn_bias"]
    assert main.attr("num_input") == 1
    weights = dict(ep.named_parameters())
    params = main.attr("params")
    assert len(params) == 4
    np.testing.assert_array_equal(params[0], weights["fc.weight"].detach().numpy())
    detached, values = detach_params(mod)
    assert _main(detached).attr("params") is None
    assert _main(detached).attr("num_input") == 1
    got = tvmlite.build(detached)["main"](x, *values["main"])
    np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-6)


def test_detach_params_leaves_a_module_without_params_alone(program):
    ep, _, _ = program
    mod = from_exported_program(ep)
    same, values = detach_params(mod)
    assert values == {}
    assert tvmlite.structural_equal(same, mod)


def test_unwrap_unit_return_tuple(program):
    ep, x, want = program
    mod = from_exported_program(ep, unwrap_unit_return_tuple=True)
    assert isinstance(_main(mod).ret_struct_info, relax.TensorStructInfo)
    np.testing.assert_allclose(tvmlite.build(mod)["main"](x), want, rtol=1e-5, atol=1e-6)


def test_no_bind_return_tuple():
    class Two(torch.nn.Module):
        def forward(self, x):
            return x + 1, x * 2

    x = torch.randn(2, 3)
    mod = from_exported_program(torch.export.export(Two(), (x,)), no_bind_return_tuple=True)
    body = _main(mod).body
    assert isinstance(body.body, relax.Tuple)  # returned as written, not bound to a var
    outputs = [b.var for b in body.blocks[-1].bindings[-2:]]
    assert [type(v) for v in outputs] == [relax.Var, relax.Var]  # each leaves the block
    got = tvmlite.build(mod)["main"](x.numpy())
    np.testing.assert_allclose(got[0], x.numpy() + 1, rtol=1e-6)
    np.testing.assert_allclose(got[1], x.numpy() * 2, rtol=1e-6)


def test_symbolic_batch_is_named_as_torch_names_it():
    class Scale(torch.nn.Module):
        def forward(self, x):
            return x.reshape(x.shape[0], -1) * 2

    batch = torch.export.Dim("batch", min=2, max=32)
    ep = torch.export.export(Scale(), (torch.randn(4, 3, 2),), dynamic_shapes={"x": {0: batch}})
    mod = from_exported_program(ep)
    main = _main(mod)
    dim = main.params[0].struct_info.shape[0]
    assert isinstance(dim, tir.Var)
    symbol = str(next(iter(ep.range_constraints)))
    assert dim.name == symbol
    assert main.attr("tir_var_lower_bound") == {symbol: 2}
    assert main.attr("tir_var_upper_bound") == {symbol: 32}
    assert f'{symbol} = TypeVar("{symbol}")' in mod.script()
    run = tvmlite.build(mod)["main"]
    for n in (2, 7):
        x = np.random.default_rng(n).standard_normal((n, 3, 2)).astype("float32")
        np.testing.assert_allclose(run(x)[0], x.reshape(n, -1) * 2, rtol=1e-6)


def test_printed_module_parses_back_structurally_equal():
    model = torch.nn.Sequential(torch.nn.Linear(6, 4), torch.nn.GELU()).eval()
    ep = torch.export.export(model, (torch.randn(3, 6),))
    mod, _ = detach_params(from_exported_program(ep, keep_params_as_input=True))
    text = mod.script()
    assert "metadata" not in text
    assert tvmlite.structural_equal(tvmlite.parse(text), mod)
    assert tvmlite.parse(text).script() == text


class _Unsupported(torch.nn.Module):
    def forward(self, x):
        a = torch.special.erfinv(x.clamp(-0.5, 0.5))
        b = torch.lgamma(x.abs() + 1)
        return a + b + torch.special.erfinv(x * 0.1)


def test_unsupported_operators_are_all_named_with_their_source_line():
    ep = torch.export.export(_Unsupported(), (torch.randn(3),))
    with pytest.raises(UnsupportedOperatorsError) as info:
        from_exported_program(ep)
    message = str(info.value)
    assert "2 operators the importer does not convert" in message
    assert "aten.erfinv.default" in message and "aten.lgamma.default" in message
    assert set(info.value.operators) == {"erfinv.default", "lgamma.default"}
    # where the model called them: this file, the line of each call
    assert __file__ in message
    assert "torch.special.erfinv(x.clamp(-0.5, 0.5))" in message
    assert "torch.lgamma(x.abs() + 1)" in message
    assert len(info.value.operators["erfinv.default"]) == 2  # both calls


def test_runtime_assertion_fails_with_its_message():
    class Checked(torch.nn.Module):
        def forward(self, x):
            torch._assert_async(x.sum() > 0, "needs a positive sum")
            return x + 1

    mod = from_exported_program(torch.export.export(Checked(), (torch.ones(3),)))
    run = tvmlite.build(mod)["main"]
    np.testing.assert_array_equal(run(np.ones(3, "float32"))[0], np.full(3, 2, "float32"))
    with pytest.raises(tvmlite.TVMLiteError, match="needs a positive sum"):
        run(-np.ones(3, "float32"))


def test_rejects_what_is_not_an_exported_program():
    with pytest.raises(FrontendError, match="must be a torch.export.ExportedProgram"):
        from_exported_program(torch.nn.Linear(2, 2))


def test_detach_params_rejects_what_is_not_a_module():
    with pytest.raises(tvmlite.TVMLiteError, match="must be an IRModule"):
        detach_params({"main": None})


def test_import_tvmlite_does_not_import_torch():
    code = (
        "import sys, tvmlite, tvmlite.frontend; "
        'mod = tvmlite.parse(\'@R.function\\ndef f(x: R.Tensor((2,), "float32")):\\n'
        "    return x\\n'); "
        "tvmlite.frontend.detach_params; "
        "sys.exit(1 if 'torch' in sys.modules else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
