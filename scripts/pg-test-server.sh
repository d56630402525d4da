#!/usr/bin/env bash
# Start a local PostgreSQL server for memwarden's server-backend tests and print its URL.
#
# Two configurations, one cluster:
#   scripts/pg-test-server.sh            database memwarden_test: NO `vector` extension in it (the
#                                        backend ranks vectors in-process and says so at open)
#   scripts/pg-test-server.sh --vector   database memwarden_test_vector: the `vector` extension
#                                        CREATED BY THE SUPERUSER, as a DBA does on a managed
#                                        service (RDS, Cloud SQL, Azure, Supabase, Neon); the
#                                        test role itself never needs superuser
#
# Idempotent: installs PostgreSQL (Debian packages) only when missing, creates the cluster only
# when absent, starts it only when down, and creates the test role/databases only when absent.
# The databases are owned by the superuser `postgres`; the test login role `memwarden` is NOT a
# superuser (so row-level security applies to it as it would in production) but may create
# schemas in the database and roles (CREATEROLE: migrations create the NOLOGIN roles
# memwarden_app and memwarden_system and grant it membership).
#
# pgvector: Debian's PostgreSQL 15 has no pgvector package. With --vector and no `vector`
# extension installed in the server, the script builds it with the installer named by
# MEMWARDEN_PGVECTOR_INSTALL (a script that builds and installs pgvector into the newest
# installed server; CI passes one) and fails with a clear message when there is none. Building
# needs postgresql-server-dev-$VERSION, which is installed first: installing it can upgrade the
# server package, and a cluster running the old binaries then fails to load its libraries
# (e.g. plpgsql.so: undefined symbol) until restarted — so every package is installed before
# the cluster starts, and a cluster that was already running is restarted after a change.
#
# Usage:  export MEMWARDEN_TEST_DATABASE_URL="$(scripts/pg-test-server.sh)"
#         export MEMWARDEN_TEST_DATABASE_URL="$(MEMWARDEN_PGVECTOR_INSTALL=/path/install.sh scripts/pg-test-server.sh --vector)"
set -euo pipefail

WANT_VECTOR=0
for a in "$@"; do
  case "$a" in
    --vector) WANT_VECTOR=1 ;;
    *) echo "pg-test-server: unknown argument $a (known: --vector)" >&2; exit 2 ;;
  esac
done

ROLE="${MEMWARDEN_PG_ROLE:-memwarden}"
PASS="${MEMWARDEN_PG_PASSWORD:-memwarden}"
DB="${MEMWARDEN_PG_DB:-memwarden_test}"
if [ "$WANT_VECTOR" = 1 ]; then DB="${MEMWARDEN_PG_VECTOR_DB:-${DB}_vector}"; fi
PORT="${MEMWARDEN_PG_PORT:-5432}"

log() { echo "pg-test-server: $*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
apt_install() {
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
}
cluster_state() { pg_lsclusters -h 2>/dev/null | awk '$1=="'"$1"'" && $2=="main" {print $4}'; }

# ---- packages (all of them before the cluster runs) ------------------------------------------
CHANGED=0
if ! command -v pg_ctlcluster >/dev/null 2>&1 || ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
  log "installing postgresql"
  apt_install postgresql
  CHANGED=1
fi
VERSION="${MEMWARDEN_PG_VERSION:-$(ls /usr/lib/postgresql | sort -V | tail -1)}"
EXT_DIR="/usr/share/postgresql/$VERSION/extension"
if [ "$WANT_VECTOR" = 1 ] && ! [ -f "$EXT_DIR/vector.control" ]; then
  INSTALLER="${MEMWARDEN_PGVECTOR_INSTALL:-}"
  if [ -z "$INSTALLER" ] || ! [ -f "$INSTALLER" ]; then
    log "pgvector is not installed in PostgreSQL $VERSION and no installer was given"
    log "(set MEMWARDEN_PGVECTOR_INSTALL to a script that builds it, or install pgvector yourself)"
    exit 1
  fi
  if ! dpkg -s "postgresql-server-dev-$VERSION" >/dev/null 2>&1; then
    # The installer skips this when pg_config exists, and the build then fails on postgres.h.
    log "installing postgresql-server-dev-$VERSION (pgvector's build needs the server headers)"
    apt_install "postgresql-server-dev-$VERSION" make gcc
  fi
  log "building pgvector with $INSTALLER"
  bash "$INSTALLER" >&2
  CHANGED=1
fi

# ---- the cluster ---------------------------------------------------------------------------
if ! pg_lsclusters -h | awk '{print $1"/"$2}' | grep -qx "${VERSION}/main"; then
  log "creating cluster ${VERSION}/main"
  as_root pg_createcluster "$VERSION" main --port "$PORT" >&2
fi
if [ "$(cluster_state "$VERSION")" = online ]; then
  if [ "$CHANGED" = 1 ]; then
    # Packages changed under a running server (e.g. an upgrade pulled in by the server headers):
    # its loaded binaries no longer match the installed libraries.
    log "restarting cluster ${VERSION}/main after package changes"
    as_root pg_ctlcluster "$VERSION" main restart >&2
  fi
else
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
if [ "$WANT_VECTOR" = 1 ]; then
  # What a DBA does once per database on a managed service; the app role only uses the type.
  psql_su "-d ${DB} -c \"CREATE EXTENSION IF NOT EXISTS vector\"" >&2
  log "database ${DB}: vector $(psql_su "-d ${DB} -c \"SELECT extversion FROM pg_extension WHERE extname = 'vector'\"") (created by the superuser)"
fi

echo "postgres://${ROLE}:${PASS}@127.0.0.1:${PORT}/${DB}"
