"""`--json` of the bench scripts is a contract for scripts outside the project (bench/README.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _collection(root: Path) -> Path:
    """A tiny English collection with BEIR-style ids and a qrels header."""
    coll = root / "tiny-en"
    coll.mkdir(parents=True)
    docs = [("d1", "Bread", "Sourdough bread needs a long fermentation."),
            ("d2", "Rivers", "Rivers carry stones and sand to the sea."),
            ("d3", "Gardens", "Tomatoes grow well in sunny gardens."),
            ("d4", "Music", "A violin has four strings.")]
    (coll / "corpus.jsonl").write_text("".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n"
                                               for i, t, x in docs))
    (coll / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "fermentation of bread"}) + "\n"
                                        + json.dumps({"_id": "q2", "text": "violin strings"}) + "\n")
    (coll / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td4\t1\n")
    return root


def test_bench_lexical_json_is_one_object_with_the_documented_keys(tmp_path: Path, bench_extra) -> None:
    data = _collection(tmp_path / "data")
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_lexical.py"), "--data", str(data),
                          "--json", "--no-synthetic"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)  # the whole stdout is exactly one JSON object
    assert list(report) == ["collections"]
    (entry,) = report["collections"]
    assert set(entry) == {"collection", "ours", "bm25s"} and entry["collection"] == "tiny-en"
    for side in ("ours", "bm25s"):
        assert set(entry[side]) == {"ndcg@10", "recall@100", "p50_ms", "p95_ms"}
        assert entry[side]["ndcg@10"] == pytest.approx(1.0)  # each query has one obvious answer
        assert entry[side]["p50_ms"] > 0


def test_bench_unlock_json_is_one_object_with_the_documented_keys(tmp_path: Path) -> None:
    data = _collection(tmp_path / "data")
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_unlock.py"), "--data", str(data),
                          "--json", "--repeat", "1", "--chars", "1000"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert set(report) == {"records", "chunks", "chars", "ingest_s", "ingest_mb_per_s", "cold_build_s", "save_s",
                           "restore_s", "changed_restore_s", "kdf_s", "restore_over_cold", "repeat", "peak_rss_mib"}
    assert report["records"] == 4 and report["chunks"] == 4 and report["repeat"] == 1


def test_bench_unlock_without_collections_says_so(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_unlock.py"), "--data", str(tmp_path / "empty"),
                          "--json"], capture_output=True, text=True, timeout=300)
    assert out.returncode != 0 and "no collections" in out.stderr and "Traceback" not in out.stderr


def test_bench_bm25_variants_json_compares_every_variant_with_the_product(tmp_path: Path) -> None:
    data = _collection(tmp_path / "data")
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_bm25_variants.py"), "--data", str(data),
                          "--collections", "tiny-en", "--json"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    variants = report["collections"]["tiny-en"]
    product = variants["product (best chunk, 100 documents)"]
    assert product["ndcg@10"] == pytest.approx(1.0) and product["delta_ndcg@10"] == 0
    assert {"whole documents", "title weight 2", "Lucene IDF", "k1 1.5", "titles not stemmed"} <= set(variants)
    for v in variants.values():
        assert set(v) == {"ndcg@10", "recall@100", "delta_ndcg@10", "interval", "gains", "losses"}


def test_bench_backup_json_is_one_object_with_the_documented_keys() -> None:
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_backup.py"), "--json", "--mib", "0.1",
                          "--runs", "1"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert set(report) == {"vault_mib", "records", "runs", "copy_s", "backup_locked_s", "backup_unlocked_s",
                           "restore_s", "argon2id_s", "search_rerank_s", "search_rerank_no_log_s", "ratios"}
    assert set(report["ratios"]) == {"backup_locked_vs_copy", "backup_unlocked_vs_copy", "restore_vs_argon2id",
                                     "search_with_log_vs_without"}
    assert report["records"] >= 50 and report["runs"] == 1 and report["backup_unlocked_s"] > 0
