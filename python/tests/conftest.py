"""pytest setup for kforge's Python front end: the fake GPU (KFORGE_FAKE_GPU=1),
the binary of this tree (or $KFORGE), a private cubin cache and database."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))


@pytest.fixture(autouse=True)
def fake_gpu(tmp_path, monkeypatch):
    k = os.environ.get("KFORGE") or os.path.join(ROOT, "build", "kforge")
    monkeypatch.setenv("KFORGE", os.path.abspath(k))
    monkeypatch.setenv("KFORGE_FAKE_GPU", "1")
    cache = os.environ.get("KFORGE_TEST_CACHE") or str(tmp_path / "cache")
    monkeypatch.setenv("KFORGE_CACHE_DIR", cache)
    monkeypatch.setenv("KFORGE_DB", str(tmp_path / "db"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KFORGE_PLANT", raising=False)
    monkeypatch.delenv("KFORGE_PY_KEEP", raising=False)
    monkeypatch.chdir(tmp_path)
    yield
