-- reducetune results database: the current schema (version 5). A new file is created from
-- this text; an older file is brought here by migrations/NNNN_*.sql, and a test checks that
-- both roads give the same tables, columns and indexes.
-- Tables carry the rt_ prefix so that an Optuna study can live in the same file.
CREATE TABLE rt_devices (
  id               INTEGER PRIMARY KEY,
  uuid             TEXT    NOT NULL UNIQUE,
  name             TEXT    NOT NULL,
  cc_major         INTEGER NOT NULL,
  cc_minor         INTEGER NOT NULL,
  sm_count         INTEGER NOT NULL,
  l2_bytes         INTEGER NOT NULL,
  bus_width_bits   INTEGER NOT NULL,
  memory_clock_khz INTEGER NOT NULL,
  driver_version   INTEGER NOT NULL,
  toolkit_version  INTEGER NOT NULL,
  created_at       TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE TABLE rt_templates (
  id           INTEGER PRIMARY KEY,
  family       TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  UNIQUE (family, content_hash)
);

CREATE TABLE rt_variants (
  id         INTEGER PRIMARY KEY,
  family     TEXT NOT NULL,
  dtype      TEXT NOT NULL,
  op         TEXT NOT NULL,
  label      TEXT NOT NULL UNIQUE,
  -- compile-time parameters only, JSON {name: value} in declaration order; the launch
  -- parameters are the measurement's (rt_measurements.launch_parameters)
  parameters TEXT NOT NULL DEFAULT '{}',
  -- decided by the search space: JSON [{"parameter", "value", "why"}] of flagged values, and
  -- run_to_run | none ('unknown': a label whose family this build cannot read)
  flags       TEXT NOT NULL DEFAULT '[]',
  determinism TEXT NOT NULL DEFAULT 'unknown'
    CHECK (determinism IN ('run_to_run', 'none', 'unknown'))
);

CREATE TABLE rt_builds (
  id              INTEGER PRIMARY KEY,
  cache_key       TEXT NOT NULL UNIQUE,
  program_key     TEXT NOT NULL,
  variant_label   TEXT NOT NULL DEFAULT '',
  arch            TEXT NOT NULL,
  nvrtc_version   TEXT NOT NULL,
  options         TEXT NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
  log             TEXT NOT NULL DEFAULT '',
  compile_seconds REAL NOT NULL,
  cubin           BLOB,
  created_at      TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  lowered         TEXT NOT NULL DEFAULT '{}'
);

CREATE TABLE rt_workloads (
  id           INTEGER PRIMARY KEY,
  dtype        TEXT    NOT NULL,
  op           TEXT    NOT NULL,
  n            INTEGER NOT NULL CHECK (n > 0),
  data_pattern TEXT    NOT NULL,
  seed         INTEGER NOT NULL,
  UNIQUE (dtype, op, n, data_pattern, seed)
);

CREATE TABLE rt_studies (
  id         INTEGER PRIMARY KEY,
  name       TEXT NOT NULL UNIQUE,
  device_id  INTEGER REFERENCES rt_devices (id),
  dtype      TEXT NOT NULL,
  op         TEXT NOT NULL,
  strategy   TEXT NOT NULL,
  config     TEXT NOT NULL DEFAULT '{}',
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- The UNIQUE key is the full context of a measurement: results from another device, driver,
-- toolkit or template version are different rows and never mix silently.
CREATE TABLE rt_measurements (
  id              INTEGER PRIMARY KEY,
  device_id       INTEGER NOT NULL REFERENCES rt_devices (id),
  variant_id      INTEGER NOT NULL REFERENCES rt_variants (id),
  launch_label    TEXT    NOT NULL,
  workload_id     INTEGER NOT NULL REFERENCES rt_workloads (id),
  template_hash   TEXT    NOT NULL,
  driver_version  INTEGER NOT NULL,
  toolkit_version INTEGER NOT NULL,
  study_id        INTEGER REFERENCES rt_studies (id),
  samples         BLOB    NOT NULL,
  sample_count    INTEGER NOT NULL,
  median_s        REAL,
  min_s           REAL,
  mean_s          REAL,
  rel_stddev      REAL,
  gbps            REAL,
  pct_of_peak     REAL,
  status          TEXT    NOT NULL CHECK (status IN ('ok', 'failed', 'invalid', 'wrong')),
  reason          TEXT    NOT NULL DEFAULT '',
  created_at      TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  pct_of_ceiling  REAL,
  launch_parameters TEXT NOT NULL DEFAULT '{}', -- JSON {name: value} of the launch config
  UNIQUE (device_id, variant_id, launch_label, workload_id, template_hash, driver_version,
          toolkit_version)
);

CREATE TABLE rt_baselines (
  id              INTEGER PRIMARY KEY,
  device_id       INTEGER NOT NULL REFERENCES rt_devices (id),
  workload_id     INTEGER NOT NULL REFERENCES rt_workloads (id),
  kind            TEXT    NOT NULL CHECK (kind IN ('cub', 'ceiling')),
  driver_version  INTEGER NOT NULL,
  toolkit_version INTEGER NOT NULL,
  samples         BLOB    NOT NULL,
  median_s        REAL    NOT NULL,
  gbps            REAL    NOT NULL,
  created_at      TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  UNIQUE (device_id, workload_id, kind, driver_version, toolkit_version)
);

-- What a measured point costs an application's lone call (reducetune calibrate; migration 0005).
CREATE TABLE rt_application_times (
  measurement_id INTEGER PRIMARY KEY REFERENCES rt_measurements (id) ON DELETE CASCADE,
  median_s       REAL    NOT NULL CHECK (median_s > 0),
  sample_count   INTEGER NOT NULL CHECK (sample_count > 0),
  created_at     TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- Covers best-per-size: (device, workload) -> ok rows by median, without reading the rows.
CREATE INDEX rt_measurements_by_workload
  ON rt_measurements (device_id, workload_id, status, median_s);
