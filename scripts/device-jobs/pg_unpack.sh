#!/usr/bin/env bash
# The carried PostgreSQL server unpacked into /tmp/pg (issue 25, z_scaling.sh pg): from
# .deps/pg.tar.xz where it travelled whole, else from the two halves scripts/device-prep
# splits it into (.deps/pg-a, .deps/pg-b), carried by two calls on one warm machine since one
# call carries at most 64 MiB. Exits 1, saying which half is missing, if neither is complete.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p /tmp/pg
if [ -f .deps/pg.tar.xz ]; then
  tar -C /tmp/pg -xJf .deps/pg.tar.xz
elif [ -f .deps/pg-a/pg.tar.xz.00 ] && [ -f .deps/pg-b/pg.tar.xz.01 ]; then
  cat .deps/pg-a/pg.tar.xz.00 .deps/pg-b/pg.tar.xz.01 | tar -C /tmp/pg -xJ
else
  echo "pg_unpack: no .deps/pg.tar.xz, and of its halves only: $(ls .deps/pg-a .deps/pg-b 2>&1 | tr '\n' ' ')" >&2
  exit 1
fi
