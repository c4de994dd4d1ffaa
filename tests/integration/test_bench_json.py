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
                           "restore_s", "argon2id_s", "search_rerank_s", "search_rerank_no_log_s", "add_s",
                           "add_home_anchor_only_s", "ratios"}
    assert set(report["ratios"]) == {"backup_locked_vs_copy", "backup_unlocked_vs_copy", "restore_vs_argon2id",
                                     "search_with_log_vs_without", "add_with_outside_copy_vs_home_only"}
    assert report["records"] >= 50 and report["runs"] == 1 and report["backup_unlocked_s"] > 0


def test_bench_lexical_json_on_a_partial_word_collection(tmp_path: Path) -> None:
    """Short pieces of longer words over another collection's corpus (its corpus.jsonl names
    that file, as zh-cmrc2018-partial-words does): ours finds every note holding the piece,
    the word-based bm25s reference cannot."""
    pytest.importorskip("bm25s", reason="bench extra not installed (pip install -e '.[bench]')")
    data = tmp_path / "data"
    words = data / "tiny-zh"
    words.mkdir(parents=True)
    docs = [("d1", "同學", "老師說王小明今天沒有來上課。"), ("d2", "公司", "台積電在新竹科學園區設廠。"),
            ("d3", "點心", "夏天最好吃的是冰淇淋和西瓜。"), ("d4", "參訪", "他們參觀了新竹廠區的生產線。"),
            ("d5", "天氣", "今天下午會下雨，記得帶傘。")]
    (words / "corpus.jsonl").write_text("".join(json.dumps({"_id": i, "title": t, "text": x}, ensure_ascii=False)
                                                + "\n" for i, t, x in docs), encoding="utf-8")
    partial = data / "tiny-zh-partial"
    partial.mkdir()
    (partial / "corpus.jsonl").write_text("../tiny-zh/corpus.jsonl", encoding="utf-8")
    queries = {"p1": ("小明", ["d1"]), "p2": ("積電", ["d2"]), "p3": ("淇淋", ["d3"]), "p4": ("竹廠", ["d4"])}
    (partial / "queries.jsonl").write_text("".join(json.dumps({"id": q, "text": t}, ensure_ascii=False) + "\n"
                                                   for q, (t, _) in queries.items()), encoding="utf-8")
    (partial / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{q}\t{d}\t1\n" for q, (_, ds) in queries.items() for d in ds), encoding="utf-8")
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_lexical.py"), "--data", str(data), "--json",
                          "--no-synthetic", "--collections", "tiny-zh-partial"], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    entries = {e["collection"]: e for e in json.loads(out.stdout)["collections"]}
    # the collection, its two cross-script variants and its Traditional copy
    assert set(entries) == {"tiny-zh-partial", "tiny-zh-partial: Trad corpus, Simp queries",
                            "tiny-zh-partial: Simp corpus, Trad queries", "tiny-zh-partial:s2t"}
    for entry in entries.values():
        assert set(entry) == {"collection", "ours", "bm25s", "words_only"}
        assert entry["ours"]["recall@100"] == pytest.approx(1.0) and entry["ours"]["ndcg@10"] == pytest.approx(1.0)
        assert entry["words_only"]["recall@100"] < 1.0  # the words alone miss pieces of longer words
    assert entries["tiny-zh-partial"]["bm25s"]["recall@100"] < 1.0
