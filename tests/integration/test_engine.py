"""Engine behaviours not covered through the CLI."""

from __future__ import annotations


def test_sample_notes_are_ingested_in_place(engine):
    vid = engine.test_vault_id
    results = engine.import_samples(vid)
    assert len(results) >= 5 and {r.status for r in results} == {"created"}
    titles = {r.title for r in results}
    assert "手沖咖啡筆記" in titles and "Sourdough bread notes" in titles
    assert engine.search(vid, "咖啡").results  # Chinese
    assert engine.search(vid, "sourdough").results  # English
    assert engine.search(vid, "混合排序 hybrid", match_mode="all").results  # mixed
    files = [p.relative_to(engine.home).as_posix() for p in engine.home.rglob("*") if p.is_file()]
    # no plaintext copies: vault files, the config, and rollback anchors (counter + MACs only)
    assert all(f.startswith(("vaults/", "anchors/")) or f == "config.toml" for f in files), files
    assert not any("咖啡".encode() in (engine.home / f).read_bytes() for f in files)
    assert {r.status for r in engine.import_samples(vid)} == {"unchanged"}


def test_record_titles_and_bodies_are_validated(engine):
    import pytest

    from memories_tui.errors import InputRefusedError

    vid = engine.test_vault_id
    with pytest.raises(InputRefusedError):
        engine.add_record(vid, kind="memory", title="  ", body="x")
    with pytest.raises(InputRefusedError):
        engine.add_record(vid, kind="asset", title="t", body="x")
    with pytest.raises(InputRefusedError):
        engine.add_record(vid, kind="memory", title="t", body="nul\x00")


def test_unlocked_vaults_and_model_state_are_reported(engine, tmp_path):
    """What a long-running host (the resident engine's status) reads without reaching inside."""
    import pytest

    from memories_tui.errors import ModelNotInstalledError

    vid = engine.test_vault_id
    assert engine.unlocked_ids() == [vid] and engine.model_loaded is False
    engine.add_record(vid, kind="memory", title="t", body="bread")
    with pytest.raises(ModelNotInstalledError):  # the default model folder is empty in a test home
        engine.search(vid, "bread", mode="vector")
    assert engine.model_loaded is False
    engine.lock(vid)
    assert engine.unlocked_ids() == []
