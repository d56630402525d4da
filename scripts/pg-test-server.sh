#!/usr/bin/env bash
# Start a local PostgreSQL server for memwarden's server-backend tests and print its URL.
#
# Idempotent: installs PostgreSQL (Debian packages) only when missing, creates the cluster only
# when absent, starts it only when down, and creates the test role/database only when absent.
# The database is owned by the superuser `postgres`; the test login role `memwarden` is NOT a
# superuser (so row-level security applies to it as it would in production) but may create
# schemas in the database and roles (CREATEROLE: migrations create the NOLOGIN roles
# memwarden_app and memwarden_system and grant it membership).
#
# Usage:  export MEMWARDEN_TEST_DATABASE_URL="$(scripts/pg-test-server.sh)"
set -euo pipefail

ROLE="${MEMWARDEN_PG_ROLE:-memwarden}"
PASS="${MEMWARDEN_PG_PASSWORD:-memwarden}"
DB="${MEMWARDEN_PG_DB:-memwarden_test}"
PORT="${MEMWARDEN_PG_PORT:-5432}"

log() { echo "pg-test-server: $*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

if ! command -v pg_ctlcluster >/dev/null 2>&1 || ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
  log "installing postgresql"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
fi

VERSION="${MEMWARDEN_PG_VERSION:-$(ls /usr/lib/postgresql | sort -V | tail -1)}"
if ! pg_lsclusters -h | awk '{print $1"/"$2}' | grep -qx "${VERSION}/main"; then
  log "creating cluster ${VERSION}/main"
  as_root pg_createcluster "$VERSION" main --port "$PORT" >&2
fi
if ! pg_lsclusters -h | awk '$1=="'"$VERSION"'" && $2=="main" {print $4}' | grep -qx online; then
  log "starting cluster ${VERSION}/main"
  as_root pg_ctlcluster "$VERSION" main start >&2
fi
PORT="$(pg_lsclusters -h | awk '$1=="'"$VERSION"'" && $2=="main" {print $3}')"

psql_su() { as_root su postgres -c "psql -p $PORT -v ON_ERROR_STOP=1 -qAt $*"; }

# Wait until the server accepts connections (start can return before it is ready).
for _ in $(seq 1 50); do
  if psql_su "-c 'SELECT 1'" >/dev/null 2>&1; then break; fi
  sleep 0.2
done

if [ "$(psql_su "-c \"SELECT 1 FROM pg_roles WHERE rolname = '${ROLE}'\"")" != "1" ]; then
  log "creating role ${ROLE}"
  psql_su "-c \"CREATE ROLE ${ROLE} LOGIN PASSWORD '${PASS}' NOSUPERUSER NOBYPASSRLS CREATEROLE\"" >&2
fi
if [ "$(psql_su "-c \"SELECT 1 FROM pg_database WHERE datname = '${DB}'\"")" != "1" ]; then
  log "creating database ${DB}"
  psql_su "-c \"CREATE DATABASE ${DB} OWNER postgres\"" >&2
fi
# PostgreSQL 15 no longer lets everyone create in public: grant the test role what it needs.
psql_su "-d ${DB} -c \"GRANT CREATE, CONNECT ON DATABASE ${DB} TO ${ROLE}; GRANT USAGE, CREATE ON SCHEMA public TO ${ROLE};\"" >&2

echo "postgres://${ROLE}:${PASS}@127.0.0.1:${PORT}/${DB}"
