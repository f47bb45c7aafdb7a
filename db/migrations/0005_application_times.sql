-- Schema version 5: what a measured point costs an application, measured. The tuner's
-- protocol times a point by graph replay on a cold L2; an application's lone call pays every
-- launch in full and finds its data where the previous kernel left it. `reducetune calibrate`
-- times a size's fastest points as an application calls them (one call on a stream between
-- two events, the GPU idle before it, hot data, the candidates in rotating rounds), and the
-- application ranking (db/reducetune/db/application_ranking.hpp) prefers these times to its
-- estimate. One row per measurement: the point, size and device are the measurement's.
CREATE TABLE rt_application_times (
  measurement_id INTEGER PRIMARY KEY REFERENCES rt_measurements (id) ON DELETE CASCADE,
  median_s       REAL    NOT NULL CHECK (median_s > 0),
  sample_count   INTEGER NOT NULL CHECK (sample_count > 0),
  created_at     TEXT    NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
