#!/usr/bin/env bash
# Regenerates this folder: a run database written by schema 2 (as SQL, store_v2.sql) and what the schema-2
# store exported from it (export.csv, .json, .md). TestStore::exportsSurviveMigrationToV3 loads the SQL,
# lets today's store migrate it, exports again and compares bytes. Needs git, g++ and sqlite3. The one
# presentation change since: export.md's peak memory is written by today's one size formatter (engine/core/util/format.h,
# decimal units: "9.01 PB" where schema 2 wrote "8388608.00 GiB"); csv and json hold the numbers themselves.
# The second: schema 7 rewrote every stored config under today's key names (opt.precision is speed.precision),
# so export.json's "config" objects and export.md's config rows were exported again by today's store after the
# migration (`tokamak runs export --format json|md --db` over the database this script makes); nothing else
# in them changed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$root" archive 54cc30e engine/store engine/util engine/train/events.h | tar -x -C "$tmp"
g++ -O1 -std=c++17 -I"$tmp" "$here/make_v2.cpp" "$tmp"/engine/store/*.cpp "$tmp/engine/util/files.cpp" \
    -lsqlite3 -pthread -o "$tmp/make_v2"
"$tmp/make_v2" "$tmp/v2.db" "$here"
sed -i 's/| 8388608.00 GiB |/| 9.01 PB |/g' "$here/export.md"  # today's size formatter (see above)
{
  sqlite3 "$tmp/v2.db" .dump
  echo "PRAGMA user_version = $(sqlite3 "$tmp/v2.db" 'PRAGMA user_version');"
  echo "PRAGMA application_id = $(sqlite3 "$tmp/v2.db" 'PRAGMA application_id');"
} > "$here/store_v2.sql"
