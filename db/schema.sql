-- ktune database, schema version 1. Embedded into the binary at build time (db/CMakeLists.txt)
-- and applied as the first migration step (db/migrations.cpp). A later version is a further
-- step there; a new file runs every step, so new and migrated files cannot differ.
--
-- Problem keys, configs and shapes are stored in Params canonical text (declaration order,
-- raw integers): "heads=16,block_len=2,causal=0,kv_dtype=1,batch=32". Each also has a JSON
-- column derived from it, so that plain sqlite3 can query single fields:
--   SELECT * FROM winners WHERE json_extract(key_json, '$.heads') = 16;
-- Times are microseconds; text timestamps are UTC ISO 8601.

-- Exactly one row: the schema version of the file and the ktune that created it.
CREATE TABLE meta (
  id             INTEGER PRIMARY KEY CHECK (id = 1),
  schema_version INTEGER NOT NULL,
  created_by     TEXT NOT NULL
);

-- One sweep run and its provenance: what codegen validates before it trusts a result. (This file
-- is schema version 1; db/migrations.cpp's later steps add to it: runs.matrix_probe.)
CREATE TABLE runs (
  id               INTEGER PRIMARY KEY,
  started_at       TEXT NOT NULL,
  family           TEXT NOT NULL CHECK (family <> ''),
  backend          TEXT NOT NULL,
  device_name      TEXT NOT NULL,
  arch             TEXT NOT NULL CHECK (arch <> ''),
  compute_units    INTEGER NOT NULL,
  driver_version   TEXT NOT NULL,
  compiler_version TEXT NOT NULL,
  template_hash    TEXT NOT NULL,
  ktune_version    TEXT NOT NULL,
  host             TEXT NOT NULL,
  command          TEXT NOT NULL,
  copy_gbps        REAL NOT NULL CHECK (copy_gbps >= 0),
  matrix_tflops    REAL NOT NULL CHECK (matrix_tflops >= 0),
  -- Target of measurements' (run_id, family) foreign key: a measurement cannot name a family
  -- other than its run's.
  UNIQUE (id, family)
);
-- compatible_runs(): what --resume continues.
CREATE INDEX runs_by_validators ON runs (family, backend, device_name, arch, template_hash);

-- One candidate (key, config) measured or rejected in one run. Timing columns are NULL when
-- nothing was timed (compile errors, failed verification, faults).
CREATE TABLE measurements (
  id           INTEGER PRIMARY KEY,
  run_id       INTEGER NOT NULL,
  family       TEXT NOT NULL,
  key          TEXT NOT NULL,
  config       TEXT NOT NULL,
  shape        TEXT NOT NULL,
  status       TEXT NOT NULL
               CHECK (status IN ('ok', 'verify_failed', 'compile_error', 'fault', 'timeout', 'infeasible')),
  median_us    REAL,
  p10_us       REAL,
  p90_us       REAL,
  samples      INTEGER NOT NULL CHECK (samples >= 0),
  gbps         REAL,
  tflops       REAL,
  frac_copy_bw REAL,
  frac_matrix  REAL,
  max_abs_err  REAL,
  rel_l2_err   REAL,
  detail       TEXT NOT NULL,
  measured_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  -- Canonical "a=1,b=2" text turned into {"a":1,"b":2}: names are identifiers, values integers.
  key_json     TEXT GENERATED ALWAYS AS (CASE key WHEN '' THEN '{}'
                 ELSE '{"' || replace(replace(key, '=', '":'), ',', ',"') || '}' END) VIRTUAL,
  config_json  TEXT GENERATED ALWAYS AS (CASE config WHEN '' THEN '{}'
                 ELSE '{"' || replace(replace(config, '=', '":'), ',', ',"') || '}' END) VIRTUAL,
  shape_json   TEXT GENERATED ALWAYS AS (CASE shape WHEN '' THEN '{}'
                 ELSE '{"' || replace(replace(shape, '=', '":'), ',', ',"') || '}' END) VIRTUAL,
  FOREIGN KEY (run_id, family) REFERENCES runs (id, family) ON DELETE CASCADE,
  -- A row that may win must have been timed: an untimed ok row would beat every real one.
  CHECK (status <> 'ok' OR (samples > 0 AND median_us > 0 AND p10_us <= median_us AND median_us <= p90_us))
);
-- done() and the winners view: per run, per key.
CREATE INDEX measurements_by_run_key ON measurements (run_id, key, config);
CREATE INDEX measurements_by_family_key ON measurements (family, key);

-- A problem key without a kernel, and what a dispatcher should do instead. Measured gaps
-- (source 'measured') come from a run; declared ones (reason 'declared') from a person, with
-- the source saying why ("aiter 0.1.19 has no fp8 2-token non-causal fold").
CREATE TABLE gaps (
  id            INTEGER PRIMARY KEY,
  family        TEXT NOT NULL CHECK (family <> ''),
  arch          TEXT NOT NULL CHECK (arch <> ''),
  key           TEXT NOT NULL,
  reason        TEXT NOT NULL
                CHECK (reason IN ('no_config', 'compile_error', 'verify_failed', 'fault', 'timeout', 'declared')),
  detail        TEXT NOT NULL,
  source        TEXT NOT NULL CHECK (source <> ''),
  run_id        INTEGER REFERENCES runs (id) ON DELETE CASCADE,
  fallback      TEXT NOT NULL,           -- 'none' or the canonical key to use instead
  fallback_note TEXT NOT NULL,
  created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  key_json      TEXT GENERATED ALWAYS AS (CASE key WHEN '' THEN '{}'
                  ELSE '{"' || replace(replace(key, '=', '":'), ',', ',"') || '}' END) VIRTUAL,
  UNIQUE (family, arch, key, source),
  CHECK ((source = 'measured') = (run_id IS NOT NULL)),
  CHECK ((source = 'measured') = (reason <> 'declared')),
  CHECK (fallback <> key)
);
CREATE INDEX gaps_by_run ON gaps (run_id);

-- The best verified measurement (lowest median, then lowest id) of each key in each run, with
-- the run's validators alongside.
CREATE VIEW winners AS
SELECT ranked.*, runs.backend, runs.device_name, runs.arch, runs.template_hash, runs.copy_gbps
FROM (
  SELECT m.*, row_number() OVER (PARTITION BY m.run_id, m.key ORDER BY m.median_us, m.id) AS rank_in_key
  FROM measurements AS m
  WHERE m.status = 'ok'
) AS ranked
JOIN runs ON runs.id = ranked.run_id
WHERE ranked.rank_in_key = 1;
