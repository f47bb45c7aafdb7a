-- Schema version 4: each fact about a tuning point is stored once, where it belongs.
-- rt_variants.parameters holds the compile-time parameters only (schema 3 files may hold the
-- launch values of whichever measurement touched the variant last); the launch parameters
-- live with the measurement; the flags and the determinism the search space decides for a
-- variant are columns, so that best, the Catalog and the exports can filter on them.
-- After this SQL the store rewrites parameters, flags, determinism and launch_parameters of
-- every existing row from its labels (db/reducetune/db/point_records.cpp, repair_points).
ALTER TABLE rt_variants ADD COLUMN flags TEXT NOT NULL DEFAULT '[]';
ALTER TABLE rt_variants ADD COLUMN determinism TEXT NOT NULL DEFAULT 'unknown'
  CHECK (determinism IN ('run_to_run', 'none', 'unknown'));
ALTER TABLE rt_measurements ADD COLUMN launch_parameters TEXT NOT NULL DEFAULT '{}';
