"""The on-disk compile cache: `build` loads the library an identical earlier
build exported instead of compiling again (`entries.py`: keys and entries;
`directory.py`: where entries live and why they can be trusted; `size.py`:
the size cap and `tvms cache info|clear`)."""

from tvmlite.lowering.cache.directory import configured_dir
from tvmlite.lowering.cache.entries import cache_key, lookup, source_digest, store

__all__ = ["cache_key", "configured_dir", "lookup", "source_digest", "store"]
