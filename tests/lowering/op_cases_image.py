"""Numerics cases: image.resize3d, image.affine_grid and image.grid_sample, with
NumPy references written from the operators' definitions (PyTorch's
grid_sample/affine_grid semantics, which TOPI follows)."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
from op_cases_common import Case, Inputs, case

G = Inputs(6)
CUBIC_A = -0.75


def _unnormalize(v: np.ndarray, size: int, align: bool) -> np.ndarray:
    return (v + 1) * (size - 1) / 2 if align else -0.5 + (v + 1) * size / 2


def _reflect(v: np.ndarray, size: int, align: bool) -> np.ndarray:
    span, start = (size - 1, 0.0) if align else (size, -0.5)
    dist = np.abs(start - v)
    times = dist.astype(np.int64) // span
    extra = dist - times * span
    folded = np.where(times % 2 == 0, extra + start, span - extra + start)
    return np.where((v >= start) & (v <= span + start), v, folded)


def _pad(v: np.ndarray, size: int, mode: str, align: bool) -> np.ndarray:
    if mode == "reflection":
        v = _reflect(v, size, align)
    if mode in ("border", "reflection"):
        v = np.clip(v, 0, size - 1)
    return v


def _pixel(x: np.ndarray, n: int, at: tuple[int, ...]) -> np.ndarray:
    if all(0 <= p < s for p, s in zip(at, x.shape[2:], strict=True)):
        return x[(n, slice(None), *at)].astype(np.float64)
    return np.zeros(x.shape[1])


def _cubic_weights(t: float) -> list[float]:
    a = CUBIC_A

    def near(f: float) -> float:
        return ((a + 2) * f - (a + 3)) * f * f + 1

    def far(f: float) -> float:
        return ((a * f - 5 * a) * f + 8 * a) * f - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _grid_sample(method: str, padding: str, align: bool) -> Callable[..., np.ndarray]:
    def ref(x: np.ndarray, grid: np.ndarray) -> np.ndarray:
        rank = x.ndim - 2
        sizes = x.shape[2:]
        out = np.zeros((*x.shape[:2], *grid.shape[2:]))
        for n in range(x.shape[0]):
            for pos in itertools.product(*(range(d) for d in grid.shape[2:])):
                raw = [float(grid[(n, rank - 1 - k, *pos)]) for k in range(rank)]
                coords = [_unnormalize(v, s, align) for v, s in zip(raw, sizes, strict=True)]
                if method == "bicubic":
                    floors = [int(np.floor(c)) for c in coords]
                    fy, fx = (c - f for c, f in zip(coords, floors, strict=True))

                    def tap(k: int, p: int) -> int:
                        return int(_pad(np.float64(p), sizes[k], padding, align))

                    rows = []
                    for i in range(4):
                        yy = tap(0, floors[0] - 1 + i)
                        taps = [_pixel(x, n, (yy, tap(1, floors[1] - 1 + j))) for j in range(4)]
                        rows.append(
                            sum(p * w for p, w in zip(taps, _cubic_weights(fx), strict=True))
                        )
                    value = sum(r * w for r, w in zip(rows, _cubic_weights(fy), strict=True))
                else:
                    coords = [
                        _pad(c, s, padding, align) for c, s in zip(coords, sizes, strict=True)
                    ]
                    if method == "nearest":
                        value = _pixel(x, n, tuple(int(np.rint(c)) for c in coords))
                    else:
                        lows = [int(np.floor(c)) for c in coords]
                        value = 0
                        for corner in itertools.product((0, 1), repeat=rank):
                            weight = 1.0
                            for c, lo, hi in zip(coords, lows, corner, strict=True):
                                weight *= (c - lo) if hi else 1 - (c - lo)
                            at = tuple(lo + hi for lo, hi in zip(lows, corner, strict=True))
                            value = value + _pixel(x, n, at) * weight
                out[(n, slice(None), *pos)] = value
        return out.astype(x.dtype)

    return ref


def _affine_grid(size: tuple[int, ...], align: bool) -> Callable[[np.ndarray], np.ndarray]:
    def ref(theta: np.ndarray) -> np.ndarray:
        axes = []
        for s in size:
            if align:
                axes.append(-1 + np.arange(s) * (2.0 - 1e-7) / (s - 1))
            else:
                axes.append(-1 + 1 / s + np.arange(s) * 2.0 / s)
        mesh = np.meshgrid(*axes, indexing="ij")  # outermost axis first
        points = [*reversed(mesh), np.ones_like(mesh[0])]  # x first, then the translation
        out = np.einsum("bdk,k...->bd...", theta.astype(np.float64), np.stack(points))
        return out.astype(theta.dtype)

    return ref


def _resize3d_linear(
    size: tuple[int, int, int], mode: str = "half_pixel", layout: str = "NCDHW"
) -> Callable[[np.ndarray], np.ndarray]:
    """Trilinear resizing one spatial axis at a time, sources clamped to the
    input; `mode` maps output position i to input position c."""

    def source(i: np.ndarray, old: int, new: int) -> np.ndarray:
        if mode == "align_corners":
            return i * (old - 1) / (new - 1) if new > 1 else np.zeros_like(i, float)
        if mode == "asymmetric":
            return i * old / new
        return (i + 0.5) * old / new - 0.5

    def ref(x: np.ndarray) -> np.ndarray:
        out = x.astype(np.float64)
        for k, new in enumerate(size):
            axis = layout.index("DHW"[k])
            old = out.shape[axis]
            c = source(np.arange(new), old, new)
            lo = np.floor(c)
            frac = c - lo
            a = np.clip(lo.astype(int), 0, old - 1)
            b = np.clip(lo.astype(int) + 1, 0, old - 1)
            shape = [1] * out.ndim
            shape[axis] = new
            out = np.take(out, a, axis) * (1 - frac).reshape(shape) + np.take(
                out, b, axis
            ) * frac.reshape(shape)
        return out.astype(x.dtype)

    return ref


def _resize3d_nearest_asymmetric(size: tuple[int, int, int]) -> Callable[[np.ndarray], np.ndarray]:
    def ref(x: np.ndarray) -> np.ndarray:
        out = x
        for k, new in enumerate(size):
            old = out.shape[2 + k]
            pick = np.clip(np.floor(np.arange(new) * old / new).astype(int), 0, old - 1)
            out = np.take(out, pick, 2 + k)
        return out

    return ref


def _image_cases() -> list[Case]:
    x4, g4 = G.uniform(2, 3, 5, 6), G.uniform(2, 2, 4, 7, lo=-1.3, hi=1.3)
    x5, g5 = G.uniform(1, 2, 3, 4, 5), G.uniform(1, 3, 2, 3, 4, lo=-1.3, hi=1.3)
    out = []
    for method in ("bilinear", "nearest", "bicubic"):
        for padding, align in (("zeros", False), ("border", True), ("reflection", False)):
            if method == "nearest" and padding != "zeros":
                continue  # ties at .5 after reflection make nearest references fragile
            out.append(
                case(
                    f"grid_sample-{method}-{padding}-align{int(align)}",
                    f'R.image.grid_sample(x, y, method="{method}", padding_mode="{padding}", '
                    f"align_corners={align})",
                    (x4, g4),
                    _grid_sample(method, padding, align),
                    tol=1e-4,
                )
            )
    out.append(
        case(
            "grid_sample-trilinear-reflection-align1",
            'R.image.grid_sample(x, y, layout="NCDHW", padding_mode="reflection", '
            "align_corners=True)",
            (x5, g5),
            _grid_sample("bilinear", "reflection", True),
            tol=1e-4,
        )
    )
    theta2, theta3 = G.uniform(2, 2, 3), G.uniform(2, 3, 4)
    out += [
        case(
            "affine_grid-2d-align1",
            "R.image.affine_grid(x, (4, 5))",
            theta2,
            _affine_grid((4, 5), True),
            tol=1e-5,
        ),
        case(
            "affine_grid-2d-align0",
            "R.image.affine_grid(x, (3, 6), align_corners=False)",
            theta2,
            _affine_grid((3, 6), False),
            tol=1e-5,
        ),
        case(
            "affine_grid-3d",
            "R.image.affine_grid(x, (2, 3, 4))",
            theta3,
            _affine_grid((2, 3, 4), True),
            tol=1e-5,
        ),
        case(
            "resize3d-linear-half-pixel",
            "R.image.resize3d(x, (5, 7, 3))",
            x5,
            _resize3d_linear((5, 7, 3)),
            tol=1e-5,
        ),
        case(
            "resize3d-nearest-asymmetric",
            'R.image.resize3d(x, (6, 2, 8), method="nearest_neighbor", '
            'coordinate_transformation_mode="asymmetric", rounding_method="floor")',
            x5,
            _resize3d_nearest_asymmetric((6, 2, 8)),
        ),
        case(
            "resize3d-linear-align-corners",
            'R.image.resize3d(x, (2, 5, 9), coordinate_transformation_mode="align_corners")',
            x5,
            _resize3d_linear((2, 5, 9), "align_corners"),
            tol=1e-5,
        ),
        case(
            "resize3d-linear-asymmetric-ndhwc",
            'R.image.resize3d(x, (4, 2, 6), layout="NDHWC", '
            'coordinate_transformation_mode="asymmetric")',
            G.uniform(2, 3, 4, 5, 2),
            _resize3d_linear((4, 2, 6), "asymmetric", "NDHWC"),
            tol=1e-5,
        ),
        case(
            "resize3d-linear-float16-same-size",
            "R.image.resize3d(x, (3, 4, 5))",
            x5.astype("float16"),
            _resize3d_linear((3, 4, 5)),
        ),
    ]
    return out


CASES: list[Case] = _image_cases()
