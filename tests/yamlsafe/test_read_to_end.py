"""read_to_end: the whole file in one read when its size is what fstat said, and every byte when
the file grew or shrank since (the cache's dependency states and a pull request's blob ids are
hashed from what it returns)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from streamwarden.yamlsafe.read import READ_FLAGS, read_to_end


def _read(path: Path, size: int) -> bytes:
    fd = os.open(path, READ_FLAGS)
    try:
        return read_to_end(fd, size)
    finally:
        os.close(fd)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes asked of each os.read made by read_to_end."""
    asked: list[int] = []
    real = os.read

    def read(fd: int, n: int) -> bytes:
        asked.append(n)
        return real(fd, n)

    monkeypatch.setattr(os, "read", read)
    return asked


def test_a_file_of_the_size_fstat_gave_is_read_in_one_call(tmp_path: Path, counted: list[int]) -> None:
    data = b"kind: FlinkDeployment\n" * 100
    f = tmp_path / "flink.yaml"
    f.write_bytes(data)
    assert _read(f, len(data)) == data
    assert counted == [len(data) + 1]


def test_an_empty_file_is_one_call_too(tmp_path: Path, counted: list[int]) -> None:
    f = tmp_path / "empty.yaml"
    f.write_bytes(b"")
    assert _read(f, 0) == b""
    assert counted == [1]


@pytest.mark.parametrize("stated", [0, 10, 4095, 4096 * 40 - 1])
def test_a_file_that_grew_after_the_fstat_is_read_to_its_end(tmp_path: Path, stated: int) -> None:
    data = bytes(range(256)) * 640  # 160 KiB: more than one read of the follow-up chunk size
    f = tmp_path / "grew.yaml"
    f.write_bytes(data)
    assert _read(f, stated) == data


@pytest.mark.parametrize("stated", [1, 100, 1 << 20])
def test_a_file_that_shrank_after_the_fstat_is_read_to_its_end(tmp_path: Path, stated: int) -> None:
    f = tmp_path / "shrank.yaml"
    f.write_bytes(b"short\n")
    assert _read(f, stated) == b"short\n"
