-- Schema version 3: a build keeps NVRTC's lowered (mangled) kernel names beside its cubin, as
-- a JSON object {name expression: mangled name}, so that a cached cubin can be loaded and its
-- kernels found in another process without compiling again (the persistent JIT cache).
ALTER TABLE rt_builds ADD COLUMN lowered TEXT NOT NULL DEFAULT '{}';
