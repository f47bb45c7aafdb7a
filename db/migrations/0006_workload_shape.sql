-- Schema version 6: a workload is a problem's shape, not a size. A problem reduces the middle
-- axis of a contiguous tensor viewed as (outer, r, inner) into (outer, inner)
-- (tuner/reducetune/space/problem.hpp); the whole-array problem is the shape (1, n, 1).
-- rt_workloads gains `outer` and `inner`; the column `n` keeps holding the reduced extent r.
-- For the whole array r = n, so every row written before this version is already right as
-- (1, n, 1): old files migrate without touching a value, and every id is kept.
--
-- The UNIQUE key must take the shape in (two shapes with the same r are two workloads), and
-- SQLite cannot change a table's UNIQUE constraint: the table is rebuilt. The store runs
-- migrations inside one write transaction with foreign keys ON (PRAGMA foreign_keys cannot
-- change inside a transaction), and rt_measurements and rt_baselines reference
-- rt_workloads (id). So: the rows are kept aside in a temporary table, the old table is
-- dropped while foreign-key checks are deferred to the commit (DROP TABLE deletes its rows
-- first: every child row counts as a pending violation), and the same rows, ids included, are
-- inserted into the new table, which settles each pending violation before the commit checks.
-- A rename would not do: renaming the old table away rewrites the children's REFERENCES to
-- follow it (SQLite >= 3.26, and with foreign keys ON even in legacy_alter_table mode).
PRAGMA defer_foreign_keys = ON;

CREATE TEMP TABLE rt_workloads_before_shapes AS SELECT * FROM main.rt_workloads;

DROP TABLE main.rt_workloads;

CREATE TABLE main.rt_workloads (
  id           INTEGER PRIMARY KEY,
  dtype        TEXT    NOT NULL,
  op           TEXT    NOT NULL,
  outer        INTEGER NOT NULL DEFAULT 1 CHECK (outer > 0),
  n            INTEGER NOT NULL CHECK (n > 0), -- the reduced extent r
  inner        INTEGER NOT NULL DEFAULT 1 CHECK (inner > 0),
  data_pattern TEXT    NOT NULL,
  seed         INTEGER NOT NULL,
  UNIQUE (dtype, op, outer, n, inner, data_pattern, seed)
);

INSERT INTO main.rt_workloads (id, dtype, op, outer, n, inner, data_pattern, seed)
  SELECT id, dtype, op, 1, n, 1, data_pattern, seed FROM temp.rt_workloads_before_shapes;

DROP TABLE temp.rt_workloads_before_shapes;
