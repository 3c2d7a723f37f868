"""The metadata of a compile-cache entry, sealed: every kind of entry (a build's
library, a compiled kernel, a lowered function) is a data file `<key>.<suffix>`
and a metadata file `<key>.json` naming the format, the entry's kind, its key,
the SHA-256 of its data and the kind's own fields, with an HMAC of all of it
under the user's secret (`directory.py`). The data is written first, then the
metadata, each to a temporary name renamed into place: a reader sees whole files
only, and metadata only over data it describes.

    meta = read_metadata(root, key, KIND, {"llvm_ir": str}, digest_of_data)
    write_metadata(root, key, KIND, digest_of_data, {"llvm_ir": text})

Metadata that does not match (another format or kind, another key, a checksum
that is not the data's, a field of the wrong type, a seal that does not verify:
a torn, swapped or planted entry) is no entry: the build makes it again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from tvmlite.lowering.cache.directory import CacheRoot
from tvmlite.runtime.export import write_atomic

FORMAT = 3  # 2: sealed metadata (HMAC); 3: constants kept apart


def sealed_fields(meta: Mapping[str, Any]) -> bytes:
    """What an entry's HMAC covers: every metadata field but the seal itself."""
    return json.dumps({k: v for k, v in meta.items() if k != "mac"}, sort_keys=True).encode()


def read_metadata(
    root: CacheRoot, key: str, kind: str | None, fields: Mapping[str, type], digest: str | None
) -> dict[str, Any] | None:
    """The metadata of entry `key` of `kind` (None: a build's entry) if it is
    sealed, has each of `fields` with a value of its type, and describes data of
    SHA-256 `digest` (None: data absent or untrusted); else None."""
    data = root.read(f"{key}.json")
    if data is None or digest is None:
        return None
    try:
        meta = json.loads(data)
    except ValueError:
        return None
    valid = (
        isinstance(meta, dict)
        and meta.get("format") == FORMAT
        and meta.get("kind") == kind
        and meta.get("key") == key
        and meta.get("sha256") == digest
        and all(isinstance(meta.get(name), t) for name, t in fields.items())
        and root.verify(sealed_fields(meta), meta.get("mac"))
    )
    return meta if valid else None


def write_metadata(
    root: CacheRoot, key: str, kind: str | None, digest: str, fields: Mapping[str, Any]
) -> None:
    """Seal and write the metadata of entry `key` of `kind`, whose data (already
    in place) has SHA-256 `digest`."""
    meta: dict[str, Any] = {"format": FORMAT, "key": key, "sha256": digest, **fields}
    if kind is not None:
        meta["kind"] = kind
    meta["mac"] = root.seal(sealed_fields(meta))
    write_atomic(root.path / f"{key}.json", json.dumps(meta))


def load_data(
    root: CacheRoot, key: str, suffix: str, kind: str, fields: Mapping[str, type]
) -> tuple[bytes, dict[str, Any]] | None:
    """The data of a small entry (read whole) and its metadata, or None."""
    data = root.read(f"{key}{suffix}")
    digest = None if data is None else hashlib.sha256(data).hexdigest()
    meta = read_metadata(root, key, kind, fields, digest)
    return None if meta is None or data is None else (data, meta)


def save_data(
    root: CacheRoot, key: str, suffix: str, kind: str, data: bytes, fields: Mapping[str, Any]
) -> None:
    """Write a small entry: its data, then its sealed metadata."""
    write_atomic(root.path / f"{key}{suffix}", data)
    write_metadata(root, key, kind, hashlib.sha256(data).hexdigest(), fields)
