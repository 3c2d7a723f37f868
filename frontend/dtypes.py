"""PyTorch dtypes as tvmlite dtype strings, and the NumPy dtypes of constants.

Spelled as TVM's translator accepts them: a `torch.dtype`, its name
(`"torch.float32"`), a short name (`"float"`, `"double"`) or a dtype string. This
module does not import torch (a `torch.dtype` is recognised by its `str`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tvmlite.diagnostics import TVMLiteError

_NAMES = {
    "float16": "float16",
    "half": "float16",
    "float": "float32",
    "float32": "float32",
    "float64": "float64",
    "double": "float64",
    "bfloat16": "bfloat16",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "long": "int64",
    "uint8": "uint8",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
    "bool": "bool",
}


def torch_dtype_name(value: Any) -> str:
    """The tvmlite dtype of a torch dtype (or one of its names)."""
    name = str(value).lower().removeprefix("torch.")
    dtype = _NAMES.get(name)
    if dtype is None:
        raise TVMLiteError(f"the importer does not handle the dtype {value}")
    return dtype


def numpy_dtype(dtype: str) -> np.dtype:
    """The NumPy dtype holding constants of `dtype`."""
    if dtype == "bfloat16":
        raise TVMLiteError("bfloat16 constants are not supported (NumPy has no bfloat16)")
    return np.dtype(dtype)
