"""Files of named arrays: a module's constants beside its text, parameter files
for `build(params=...)` and `tvms run --params`. One format, `.npz`: NumPy reads
and writes it (`np.savez`, `np.load`), so every tool a user has makes one, and
tvmlite needs nothing beyond NumPy.

Reading maps instead of copying: an `.npz` written by `np.savez` stores its
arrays uncompressed, so each array is a range of the file. Every such array
whose data starts at a multiple of its element size is a read-only view of one
memory map of the file (pages shared with the page cache, nothing read until
used), which is what makes a model's weights cheap to load, bind and build.
Compressed members (`np.savez_compressed`) and misaligned ones are read into
memory.

Writing pads each member so that its data starts at a multiple of 64 bytes (a
zip extra field in the member's local header, as Android's zipalign does): every
array of a file tvmlite wrote is mapped, and aligned as tvmlite's own buffers
are. The file is an ordinary `.npz` for any other reader.
"""

from __future__ import annotations

import io
import mmap
import os
import struct
import zipfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np
from numpy.lib import format as npy

from tvmlite.diagnostics import TVMLiteError

ALIGN = 64
SUFFIX = ".npy"
_LOCAL_HEADER = struct.Struct("<IHHHHHIIIHH")  # a zip member's local file header
_LOCAL_MAGIC = 0x04034B50
_PAD_ID = 0xD935  # zipalign's extra-field id: padding, ignored by readers
_ZIP64_EXTRA = 20  # zipfile adds it to the local header of a member written with force_zip64


def load_arrays(path: str | os.PathLike[str], what: str = "array file") -> dict[str, np.ndarray]:
    """The arrays of an `.npz` file by name, mapped where they can be (see the
    module docstring). `what` names the file's role in errors."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as f:
            whole = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if _size(f) else None
            archive = zipfile.ZipFile(f)
            with archive:
                return {
                    info.filename.removesuffix(SUFFIX): _member(archive, info, whole, name, what)
                    for info in archive.infolist()
                    if not info.is_dir()
                }
    except OSError as err:
        raise TVMLiteError(f"{name}: cannot read the {what}: {err.strerror or err}") from None
    except zipfile.BadZipFile:
        raise TVMLiteError(f"{name}: the {what} is not an .npz file (as np.savez writes)") from None


def _size(f: io.BufferedReader) -> int:
    return os.fstat(f.fileno()).st_size


def _member(
    archive: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    whole: mmap.mmap | None,
    name: str,
    what: str,
) -> np.ndarray:
    if not info.filename.endswith(SUFFIX):
        raise TVMLiteError(f"{name}: the {what} holds {info.filename!r}, which is not an array")
    where = f"{name}: array {info.filename.removesuffix(SUFFIX)!r} of the {what}"
    try:
        if info.compress_type == zipfile.ZIP_STORED and whole is not None:
            mapped = _mapped(whole, info)
            if mapped is not None:
                return mapped
        with archive.open(info) as member:
            array = npy.read_array(member, allow_pickle=False)
    except (ValueError, EOFError, struct.error, zipfile.BadZipFile, NotImplementedError) as err:
        raise TVMLiteError(f"{where} cannot be read: {err}") from None
    return _native(array)


def _mapped(whole: mmap.mmap, info: zipfile.ZipInfo) -> np.ndarray | None:
    """A read-only view of the file for a stored member, or None when its data
    is not aligned to its element size (or is not plain data)."""
    head = _LOCAL_HEADER.unpack_from(whole, info.header_offset)
    if head[0] != _LOCAL_MAGIC:
        raise ValueError("a zip member whose local header is missing")
    start = info.header_offset + _LOCAL_HEADER.size + head[9] + head[10]
    stream = io.BytesIO(whole[start : start + min(info.file_size, 1 << 16)])
    version = npy.read_magic(stream)
    if version == (1, 0):
        shape, fortran, dtype = npy.read_array_header_1_0(stream)
    else:
        shape, fortran, dtype = npy.read_array_header_2_0(stream)
    if dtype.hasobject:
        raise ValueError("it holds Python objects, which are never loaded")
    offset = start + stream.tell()
    count = int(np.prod(shape, dtype=np.int64))
    if offset % dtype.alignment or not dtype.isnative:
        return None
    if offset + count * dtype.itemsize > start + info.file_size:
        raise ValueError("its data runs past the member")
    flat = np.frombuffer(whole, dtype=dtype, count=count, offset=offset)
    return flat.reshape(shape[::-1]).T if fortran else flat.reshape(shape)


def _native(array: np.ndarray) -> np.ndarray:
    return array if array.dtype.isnative else array.astype(array.dtype.newbyteorder("="))


def save_arrays(path: str | os.PathLike[str], arrays: Mapping[str, np.ndarray]) -> None:
    """Write `arrays` as an `.npz` file whose every array starts at a multiple of
    64 bytes (atomically: a reader sees the old file or the new one)."""
    from tvmlite.runtime.export import write_atomic_with

    target = Path(path)

    def write(f: io.BufferedWriter) -> None:
        with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
            for key, value in arrays.items():
                _write_member(archive, f, key, value)

    write_atomic_with(target, write, mode=0o644)


def _write_member(archive: zipfile.ZipFile, f: io.BufferedWriter, key: str, value: object) -> None:
    array = np.asarray(value)
    if array.dtype.hasobject:
        raise TVMLiteError(f"array {key!r}: Python objects cannot be written to an .npz file")
    if not (array.flags.c_contiguous or array.flags.f_contiguous):
        array = np.ascontiguousarray(array)
    header = io.BytesIO()
    npy.write_array_header_2_0(header, npy.header_data_from_array_1_0(array))
    info = zipfile.ZipInfo(key + SUFFIX, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    fixed = _LOCAL_HEADER.size + len(info.filename.encode()) + _ZIP64_EXTRA + header.tell()
    pad = -(f.tell() + fixed) % ALIGN
    if pad:
        pad += ALIGN if pad < 4 else 0  # an extra field is at least its 4-byte header
        info.extra = struct.pack("<HH", _PAD_ID, pad - 4) + bytes(pad - 4)
    with archive.open(info, "w", force_zip64=True) as member:
        member.write(header.getvalue())
        if array.size:
            order = "F" if array.flags.f_contiguous and not array.flags.c_contiguous else "C"
            member.write(memoryview(array.reshape(-1, order=order).view(np.uint8)))
