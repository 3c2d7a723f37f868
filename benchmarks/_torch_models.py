"""PyTorch eager definitions of the real models (the corpus's models_real, made by
the shared gen_real_models.py), for benchmarks/models.py: the architectures only.
The weights come from the model's NAME.npz, matched by name to the parameters of
the text's `main`, which torch.export names after the module path (`p_` + the
path in lower case, dots as underscores: `p_layer1_0_conv1_weight`). So the
model computes what the npz's outputs say it computes, and the worker checks it
does before timing it.

Imports torch (and torchvision or transformers for the architecture asked for)
only when a model is made: the other workers never import it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np


def import_torchvision() -> Any:
    """torchvision, also where its C extension does not load (the CPU torch wheel
    with the package index's torchvision, built against CUDA torch): its import
    registers fake kernels for the `nms` and `qnms` operators the extension would
    have defined. Declaring their schemas first lets that registration succeed;
    no model here calls them."""
    import torch

    try:
        import torchvision
    except RuntimeError as exc:
        if "torchvision::nms" not in str(exc):
            raise
        for name in [m for m in sys.modules if m.split(".")[0] == "torchvision"]:
            del sys.modules[name]
        lib = torch.library.Library("torchvision", "FRAGMENT")
        for op in ("nms", "qnms"):
            lib.define(f"{op}(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        import_torchvision.keep = lib  # the definitions live as long as the library object
        import torchvision
    return torchvision


def _wrapped(model: Any, outputs: tuple[str, ...]) -> Any:
    """A transformers model called with (input_ids, attention_mask) positionally and
    returning the named fields of its output as a tuple; the attribute `model`
    keeps the parameter paths `model.` + ... as the export names them."""
    import torch

    class Wrapped(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *args: Any) -> tuple[Any, ...]:
            names = ("input_ids", "attention_mask")[: len(args)]
            out = self.model(**dict(zip(names, args, strict=False)))
            return tuple(getattr(out, key) for key in outputs)

    return Wrapped()


def resnet18() -> Any:
    return import_torchvision().models.resnet18(weights=None)


def mobilenet_v2() -> Any:
    return import_torchvision().models.mobilenet_v2(weights=None)


def vit() -> Any:
    vision_transformer = import_torchvision().models.vision_transformer
    return vision_transformer.VisionTransformer(
        image_size=224, patch_size=16, num_layers=2, num_heads=12, hidden_dim=768, mlp_dim=3072
    )


def bert() -> Any:
    import transformers

    config = transformers.BertConfig(
        vocab_size=8192,
        hidden_size=768,
        num_hidden_layers=2,
        num_attention_heads=12,
        intermediate_size=3072,
        max_position_embeddings=512,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    return _wrapped(transformers.BertModel(config), ("last_hidden_state", "pooler_output"))


def gpt2() -> Any:
    import transformers

    config = transformers.GPT2Config(
        vocab_size=8192,
        n_positions=128,
        n_embd=768,
        n_layer=2,
        n_head=12,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        use_cache=False,
        bos_token_id=0,
        eos_token_id=0,
    )
    return _wrapped(transformers.GPT2Model(config), ("last_hidden_state",))


def llama() -> Any:
    import transformers

    config = transformers.LlamaConfig(
        vocab_size=8192,
        hidden_size=512,
        intermediate_size=1376,
        num_hidden_layers=2,
        num_attention_heads=8,
        num_key_value_heads=4,
        max_position_embeddings=256,
        use_cache=False,
        bos_token_id=1,
        eos_token_id=2,
    )
    return _wrapped(transformers.LlamaModel(config), ("last_hidden_state",))


# model name -> its architecture; the dynamic-batch export and the one called
# without a mask share the architecture of their plain model
ARCHITECTURES: dict[str, Callable[[], Any]] = {
    "resnet18": resnet18,
    "mobilenet_v2": mobilenet_v2,
    "mobilenet_v2_dynbatch": mobilenet_v2,
    "vit": vit,
    "bert": bert,
    "gpt2": gpt2,
    "gpt2_nomask": gpt2,
    "llama": llama,
}


def export_name(path: str) -> str:
    """The name torch.export gives the parameter or buffer at `path`."""
    return "p_" + path.replace(".", "_").lower()


def make(name: str, weights: dict[str, np.ndarray]) -> Any:
    """Model `name` in eval mode with `weights` (main's parameter name -> array)
    copied into its parameters and buffers; every one of them must be given."""
    import torch

    if name not in ARCHITECTURES:
        raise KeyError(f"no PyTorch definition of '{name}' (known: {', '.join(ARCHITECTURES)})")
    import_torchvision()  # transformers imports it too, when it is installed
    model = ARCHITECTURES[name]().eval()
    tensors = dict(model.named_parameters()) | dict(model.named_buffers())
    by_export = {export_name(path): t for path, t in tensors.items()}
    missing = sorted(set(weights) - set(by_export))
    if missing:
        raise KeyError(f"'{name}': the PyTorch model has no {', '.join(missing[:5])}")
    with torch.no_grad():
        for key, array in weights.items():
            target = by_export[key]
            if tuple(target.shape) != array.shape:
                raise ValueError(f"'{name}': {key} is {target.shape} in PyTorch, {array.shape}")
            target.copy_(torch.from_numpy(array))
    return model
