"""The store from Python: corrupt files refused untouched, merge, export (no GPU)."""

from __future__ import annotations

import json

import pytest

import reducetune
from reducetune import StoreError, _core

from conftest import SYNTHETIC_DEVICE


def test_a_corrupt_database_is_refused_and_left_as_it_was(tmp_path):
    bad = tmp_path / "corrupt.db"
    content = b"SQLite format 3\x00" + b"\x13garbage" * 500
    bad.write_bytes(content)
    with pytest.raises(StoreError):
        reducetune.open_store(bad)
    assert bad.read_bytes() == content


def test_merge_copies_measurements_from_another_file(tmp_path, synthetic_db):
    target = tmp_path / "merged.db"
    store = reducetune.open_store(target)
    stats = store.merge_from(str(synthetic_db))
    assert stats["inserted"] > 0
    assert store.devices()[0]["uuid"] == SYNTHETIC_DEVICE["uuid"]


def test_export_json_names_the_best_of_each_size(synthetic_db):
    doc = json.loads(reducetune.export_json(synthetic_db))
    assert SYNTHETIC_DEVICE["name"] in json.dumps(doc)
    assert "namespace reducetune_dispatch" in reducetune.export_header(synthetic_db)


def test_every_exported_rule_carries_an_application_pick_among_its_measured_points(synthetic_db):
    """export json's "application" (db/application_ranking.hpp): a measured, selected point of
    the rule's size, no slower by median than the winner plus its saved launches allow."""
    doc = json.loads(reducetune.export_json(synthetic_db))
    store = reducetune.open_store(synthetic_db, create=False)
    device = store.devices()[0]["id"]
    rules = [(t, r) for d in doc["devices"] for t in d["tables"] for r in t["rules"]]
    assert rules
    for t, r in rules:
        a = r["application"]
        rows = {(h["variant_label"], h["launch_label"]): h
                for h in store.history(device, t["dtype"], t["op"], r["bucket_n"])}
        assert (a["variant"], a["launch"]) in rows
        assert a["determinism"] == "run_to_run" and a["launches"] >= 1
        assert a["median_s"] >= r["median_s"]  # the winner is the fastest by median


def test_best_is_the_fastest_verified_point(synthetic_db):
    b = reducetune.best("float32", "sum", 1 << 20, db=synthetic_db)
    store = reducetune.open_store(synthetic_db, create=False)
    rows = store.history(store.devices()[0]["id"], "float32", "sum", 1 << 20)
    space = reducetune.Space("tunable", "float32", "sum", reducetune.limits_for_arch("sm_90"))
    # by default the fastest deterministic point (no float atomics finish)
    fastest = min((r for r in rows if r["status"] == "ok"
                   and space.parse(r["variant_label"], r["launch_label"]).deterministic),
                  key=lambda r: r["median_s"])
    assert b["variant"] == fastest["variant_label"]
    assert b["launch"] == fastest["launch_label"]
    assert _core.catalog_best(str(synthetic_db), SYNTHETIC_DEVICE["uuid"], "float32", "sum",
                              3) is not None
