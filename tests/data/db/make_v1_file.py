"""Recreates schema_v1.sqlite: a reducetune results file as schema version 1 wrote it.

The committed file is the test input (tests/cpp/db/test_db_migration.cpp); this script only
documents how it was made. Run from this folder: python3 make_v1_file.py
"""
import pathlib
import sqlite3
import struct

here = pathlib.Path(__file__).resolve().parent
out = here / "schema_v1.sqlite"
out.unlink(missing_ok=True)
db = sqlite3.connect(out)
db.executescript((here / "../../../db/migrations/0001_initial.sql").read_text())
db.execute("PRAGMA application_id = 1381262434")  # 0x52546462, "RTdb"
db.execute("PRAGMA user_version = 1")
db.execute(
    "INSERT INTO rt_devices (uuid, name, cc_major, cc_minor, sm_count, l2_bytes, bus_width_bits,"
    " memory_clock_khz, driver_version, toolkit_version, created_at)"
    " VALUES ('GPU-v1-0000', 'NVIDIA H100 80GB HBM3', 9, 0, 132, 52428800, 5120, 2619000,"
    " 12040, 12040, '2026-01-02T03:04:05.000Z')")
db.execute(
    "INSERT INTO rt_variants (family, dtype, op, label, parameters) VALUES ('tunable', 'float32',"
    " 'sum', 'tunable.float32.sum.bs_256', '{\"block_size\": 256}')")
for n, seed in ((1024, 1), (1048576, 1)):
    db.execute("INSERT INTO rt_workloads (dtype, op, n, data_pattern, seed)"
               " VALUES ('float32', 'sum', ?, 'random', ?)", (n, seed))
samples = [1.0e-5, 1.2e-5, 1.1e-5]
blob = struct.pack("<3d", *samples)
for workload_id, scale in ((1, 1.0), (2, 100.0)):
    s = [x * scale for x in samples]
    db.execute(
        "INSERT INTO rt_measurements (device_id, variant_id, launch_label, workload_id,"
        " template_hash, driver_version, toolkit_version, samples, sample_count, median_s,"
        " min_s, mean_s, rel_stddev, gbps, pct_of_peak, status, reason, created_at)"
        " VALUES (1, 1, 'ept_16.cap_0', ?, 'hash-v1', 12040, 12040, ?, 3, ?, ?, ?, 0.0909,"
        " 400.0, 12.0, 'ok', '', '2026-01-02T03:04:06.000Z')",
        (workload_id, struct.pack("<3d", *s), sorted(s)[1], min(s), sum(s) / 3))
db.commit()
db.execute("VACUUM")
db.close()
