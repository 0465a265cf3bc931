"""A whole store that DuckDB shrank opens; a cut one is still refused at open.

DuckDB writes a checkpoint's database header (its `block_count` counting every block, free or
not), then truncates the free blocks at the end of the file. A healthy store is then shorter than
`block_count` blocks: the size check at open must count the blocks in use (those not on the free
list), not `block_count`. It once refused such stores as truncated: "the file is 2,109,440 bytes
but its header counts 2,895,872".
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest
from store_helpers import blueprint

from codesearch_core.errors import StoreError
from codesearch_core.store.core import Store
from codesearch_core.store.duckdb_file import BLOCK_START, current_header, least_size


def _header_size(path: Path) -> int:
    """What the old check demanded: the headers and every block the header counts."""
    header = current_header(path.read_bytes()[:BLOCK_START])
    assert header is not None
    _, _, _, block_count, block_size = header
    return BLOCK_START + block_count * block_size


_SHRINK: str = """
import sys, duckdb
path, rows = sys.argv[1], int(sys.argv[2])
conn = duckdb.connect(path)
conn.execute("CREATE TABLE scratch AS SELECT i, repeat('x', 200) || i AS s FROM range(?) t(i)", [rows])
conn.close()
conn = duckdb.connect(path)
conn.execute("DROP TABLE scratch")
conn.close()
"""


def _shrink(path: Path, rows: int) -> subprocess.CompletedProcess[str]:
    """In another process, as `codesearch` commands do: let DuckDB grow the file by a scratch
    table at its end, then free it. The next checkpoint truncates the file below what its header
    counts, as deleting or replacing rows does."""
    return subprocess.run(
        [sys.executable, "-c", _SHRINK, str(path), str(rows)],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def shrunk_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("shrunk") / "studio.duckdb"
    with Store(path) as store:
        store.blueprints.add([blueprint(i) for i in range(400)])
    assert _shrink(path, 20_000).returncode == 0
    return path


@pytest.fixture
def shrunk_store(shrunk_template: Path, tmp_path: Path) -> Path:
    path = tmp_path / "studio.duckdb"
    shutil.copyfile(shrunk_template, path)
    return path


def test_a_store_duckdb_shrank_opens_and_reads(shrunk_store: Path) -> None:
    size = shrunk_store.stat().st_size
    assert size < _header_size(shrunk_store), "the file must be shorter than its header counts"
    with shrunk_store.open("rb") as fh:
        assert least_size(fh) == size
    # As several `codesearch export` processes in a row: each opens the file again.
    for _ in range(3):
        with Store(shrunk_store) as store:
            assert store.counts().blueprints == 400
            assert store.blueprints.get(blueprint(7).id) is not None


def test_a_store_shrunk_while_let_go_of_opens_again(tmp_path: Path) -> None:
    # The studio lets go of the file when idle; another process checkpoints it meanwhile.
    path = tmp_path / "studio.duckdb"
    with Store(path, idle_release_s=0.1) as store:
        store.blueprints.add([blueprint(i) for i in range(100)])
        deadline = time.monotonic() + 10
        while True:  # until the store has let go of the file
            done = _shrink(path, 20_000)
            if done.returncode == 0:
                break
            assert "lock" in done.stderr, done.stderr
            assert time.monotonic() < deadline, "the store never let go of the file"
            time.sleep(0.1)
        assert path.stat().st_size < _header_size(path)
        assert store.counts().blueprints == 100


def test_a_store_shrunk_again_and_again_opens_every_time(tmp_path: Path) -> None:
    path = tmp_path / "studio.duckdb"
    with Store(path) as store:
        store.blueprints.add([blueprint(i) for i in range(50)])
    shrunk = 0
    for rows in (40_000, 5_000, 20_000):
        assert _shrink(path, rows).returncode == 0
        shrunk += path.stat().st_size < _header_size(path)
        with Store(path) as store:
            assert store.counts().blueprints == 50
    assert shrunk >= 2


@pytest.mark.parametrize("keep_percent", [1, 10, 25, 50, 75, 90, 99])
def test_a_cut_of_a_shrunk_store_is_still_refused(shrunk_store: Path, keep_percent: int) -> None:
    size = shrunk_store.stat().st_size
    os.truncate(shrunk_store, size * keep_percent // 100)
    with pytest.raises(StoreError, match="damaged or truncated") as err:
        Store(shrunk_store)
    assert str(shrunk_store) in str(err.value)
    assert "restore it from a backup" in str(err.value)


def test_a_free_list_that_does_not_parse_is_not_judged(shrunk_store: Path) -> None:
    # A false refusal locks a user out of a store: a free list this code cannot read (here a count
    # larger than the file's blocks) makes the check stand aside, not refuse.
    header = current_header(shrunk_store.read_bytes()[:BLOCK_START])
    assert header is not None
    _, _, free_list, _, block_size = header
    block_id, index = free_list & ((1 << 56) - 1), free_list >> 56
    sub_size = (block_size - 8) // 64 // 8 * 8
    count_at = BLOCK_START + block_id * block_size + 8 + index * sub_size + 8
    with shrunk_store.open("r+b") as fh:
        fh.seek(count_at)
        fh.write(struct.pack("<Q", 1 << 50))
        assert least_size(fh) is None


def test_the_check_reads_a_few_kib_whatever_the_store_size(shrunk_store: Path) -> None:
    started = time.perf_counter()
    for _ in range(20):
        with shrunk_store.open("rb") as fh:
            least_size(fh)
    assert (time.perf_counter() - started) / 20 < 0.05
