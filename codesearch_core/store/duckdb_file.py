"""The least size a DuckDB database file can have, read from its headers and free list.

Used by the size check at open (`store.connect`): a file cut short (a full disk, an interrupted
copy) must be refused before DuckDB opens it, while a whole file DuckDB shrank itself must never be.

DuckDB's layout (src/storage/single_file_block_manager.cpp, src/storage/metadata/, v1.x-2.0):

* Three 4 KiB headers: the main header (checksum u64, b"DUCK", version u64, flags u64 x4, ...;
  flag bit 0 of flags[0]: encrypted), then two database headers written in turn, the current one
  the one with the higher `iteration` (the second on a tie). A database header is a checksum, then
  little-endian u64s: iteration, meta_block, free_list, block_count, block_alloc_size, ...
* Then blocks of `block_alloc_size` bytes: block `id` starts at 12 KiB + id * block_alloc_size,
  with an 8-byte checksum before its `block_alloc_size - 8` bytes of data.
* Metadata lives in metadata blocks: a block's data cut into 64 sub-blocks of
  floor8((block_alloc_size - 8) / 64) bytes. A pointer to one is a u64, the block id in its low 56
  bits and the sub-block index in its top 8. A sub-block starts with the pointer to the next one
  of its chain (all ones: the last), then data.
* `free_list` points at such a chain: the count of free blocks (u64), their ids (i64 each), then
  the multi-use blocks and the metadata blocks (not needed here). All ones: no free block.

Why the header's `block_count` is not the size: at each checkpoint DuckDB writes the header
(`block_count` = its in-memory block count), then truncates the free blocks at the end of the file
(`SingleFileBlockManager::Truncate`) without writing the header again. Those blocks are on the
free list the header points to, so a whole file is often shorter than `block_count` blocks. What
must be in the file are the blocks in use: every id below `block_count` that is not on the free
list, the free list's own blocks included (DuckDB's own `VerifyBlocks` holds every block below
`block_count` to be either free or in use). Checked against DuckDB 2.0.0 files.
"""

from __future__ import annotations

import struct
import sys
from array import array
from bisect import bisect_left
from typing import BinaryIO, Final

HEADER_BYTES: Final = 4096
#: The main header and the two database headers.
BLOCK_START: Final = 3 * HEADER_BYTES
_MAIN_FLAGS: Final = struct.Struct("<Q")
_MAIN_FLAGS_AT: Final = 20  # checksum (8), b"DUCK" (4), version (8)
_ENCRYPTED_FLAG: Final = 1
#: checksum, iteration, meta_block, free_list, block_count, block_alloc_size
_DB_HEADER_FIELDS: Final = struct.Struct("<QQQQQQ")
_BLOCK_CHECKSUM_BYTES: Final = 8
_METADATA_PER_BLOCK: Final = 64
_NO_POINTER: Final = (1 << 64) - 1
_BLOCK_ID_MASK: Final = (1 << 56) - 1
_U64: Final = struct.Struct("<Q")
_MIN_BLOCK_ALLOC: Final = 16384
_MAX_BLOCK_ALLOC: Final = 262144
#: Most sub-blocks of free list read (4 KiB each at the default block size, 510 free block ids
#: each; a 1 GB store has 4,096 blocks, so at most 9): 2,048 is a free list of a million blocks,
#: 256 GiB of free space, read in about 0.1 s. A longer one is not read and the file is not
#: judged (see `least_size`).
_MAX_FREE_LIST_SUBBLOCKS: Final = 2048


def current_header(headers: bytes) -> tuple[int, int, int, int, int] | None:
    """The current database header of these first 12 KiB as (iteration, meta_block, free_list,
    block_count, block_alloc_size); None when it is not one this code can read (an encrypted file,
    a block size DuckDB does not write)."""
    if len(headers) < BLOCK_START:
        return None
    if _MAIN_FLAGS.unpack_from(headers, _MAIN_FLAGS_AT)[0] & _ENCRYPTED_FLAG:
        return None  # the database headers and the metadata are encrypted
    first = _DB_HEADER_FIELDS.unpack_from(headers, HEADER_BYTES)[1:]
    second = _DB_HEADER_FIELDS.unpack_from(headers, 2 * HEADER_BYTES)[1:]
    # DuckDB's own choice (LoadExistingDatabase): the first only when its iteration is higher.
    iteration, meta_block, free_list, block_count, block_size = (
        first if first[0] > second[0] else second
    )
    sane = (
        _MIN_BLOCK_ALLOC <= block_size <= _MAX_BLOCK_ALLOC
        and block_size & (block_size - 1) == 0
        and block_count < 1 << 40
    )
    return (iteration, meta_block, free_list, block_count, block_size) if sane else None


def least_size(fh: BinaryIO) -> int | None:
    """The least size the DuckDB file open as `fh` can have: its headers and
    every block in use, i.e. up to the end of the highest block id that is not on its free list.

    Reads the 12 KiB of headers and the free list's sub-blocks (one for a store of a few GB), never
    the data. None when the file cannot be judged this way: headers this code does not know, a
    free list that does not parse (ids out of range, a loop, longer than
    `_MAX_FREE_LIST_SUBBLOCKS`). A file judged None is opened: refusing a whole store is worse than
    letting a cut one through to DuckDB's own error and `codesearch db check`.
    """
    fh.seek(0)
    header = current_header(fh.read(BLOCK_START))
    if header is None:
        return None
    _, meta_block, free_list, block_count, block_size = header
    if block_count == 0:
        return BLOCK_START  # never checkpointed: no block yet
    sub_size = (block_size - _BLOCK_CHECKSUM_BYTES) // _METADATA_PER_BLOCK // 8 * 8

    if meta_block != _NO_POINTER and (meta_block & _BLOCK_ID_MASK) >= block_count:
        return None
    ids: list[int]
    if free_list != _NO_POINTER:
        data = bytearray()
        seen: set[int] = set()
        pointer = free_list
        wanted, count = 8, 0  # the count, then 8 bytes a free block
        while len(data) < wanted:
            if pointer == _NO_POINTER:
                return None  # the chain ends before the list does
            block_id, index = pointer & _BLOCK_ID_MASK, pointer >> 56
            if (
                block_id >= block_count
                or index >= _METADATA_PER_BLOCK
                or pointer in seen
                or len(seen) >= _MAX_FREE_LIST_SUBBLOCKS
            ):
                return None
            seen.add(pointer)
            fh.seek(BLOCK_START + block_id * block_size + _BLOCK_CHECKSUM_BYTES + index * sub_size)
            sub = fh.read(sub_size)
            if len(sub) < sub_size:
                # The free list's own blocks are in use: this one is cut off.
                return BLOCK_START + (block_id + 1) * block_size
            if not data:
                count = _U64.unpack_from(sub, 8)[0]
                if count > block_count:
                    return None
                wanted = 8 + 8 * count
            data += sub[8:]
            pointer = _U64.unpack_from(sub)[0]
        free = array("q")  # i64, in C: a free list may hold a million ids
        free.frombytes(data[8:wanted])
        if sys.byteorder != "little":
            free.byteswap()
        ids = sorted(free)  # DuckDB writes them sorted (a std::set): linear
        if ids and (ids[0] < 0 or ids[-1] >= block_count):
            return None
        if meta_block != _NO_POINTER and _contains(ids, meta_block & _BLOCK_ID_MASK):
            return None  # the catalog's root cannot be free
    else:
        ids = []
    # The highest block in use: the highest id below block_count not on the free list.
    highest_used = block_count - 1
    for block_id in reversed(ids):
        if block_id == highest_used:
            highest_used -= 1
        elif block_id < highest_used:
            break
    return BLOCK_START + (highest_used + 1) * block_size


def _contains(ordered: list[int], value: int) -> bool:
    at = bisect_left(ordered, value)
    return at < len(ordered) and ordered[at] == value
