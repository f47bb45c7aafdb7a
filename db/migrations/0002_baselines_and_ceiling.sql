-- Schema version 2: the CUB and streaming-ceiling baselines, each measurement's share of the
-- ceiling, and an index for the best-per-size query.
ALTER TABLE rt_measurements ADD COLUMN pct_of_ceiling REAL;

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

-- Covers best-per-size: (device, workload) -> ok rows by median, without reading the rows.
CREATE INDEX rt_measurements_by_workload
  ON rt_measurements (device_id, workload_id, status, median_s);
