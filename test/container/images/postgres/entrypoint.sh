#!/bin/sh
# The official image's first start, in short: initdb with POSTGRES_USER as the superuser, password
# authentication from other hosts, the init scripts run once, then the server in the foreground.
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pw="$(mktemp)"
  printf '%s\n' "${POSTGRES_PASSWORD:?}" > "$pw"
  initdb -U "${POSTGRES_USER:-postgres}" --pwfile="$pw" --auth-local=trust --auth-host=scram-sha-256 -D "$PGDATA" >/dev/null
  rm -f "$pw"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  for f in /docker-entrypoint-initdb.d/*.sql; do
    [ -e "$f" ] && psql -v ON_ERROR_STOP=1 -U "${POSTGRES_USER:-postgres}" -d postgres -f "$f"
  done
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
fi
[ "${1:-postgres}" = postgres ] && shift || true
exec postgres -c listen_addresses='*' "$@"
