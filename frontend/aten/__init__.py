"""The ATen converters, one module per family; importing this package fills
`tvmlite.frontend.registry.CONVERTERS`."""

from tvmlite.frontend.aten import (  # noqa: F401  (imported to register their converters)
    binary,
    control,
    conv_pool,
    create,
    image,
    index,
    linalg,
    norm,
    reduce,
    rnn,
    shape,
    unary,
)
