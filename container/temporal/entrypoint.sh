#!/bin/sh
# Starts a Temporal server on PostgreSQL, the way test/helpers/temporal-cluster.ts does outside
# containers: databases created and migrated by Temporal's SQL tool (idempotent, every start), the
# four services in one process, then the `default` namespace registered once it answers.
#
# Settings: POSTGRES_SEEDS (host), DB_PORT (5432), POSTGRES_USER, POSTGRES_PWD, DBNAME (temporal),
# VISIBILITY_DBNAME (temporal_visibility), NUM_HISTORY_SHARDS (4; fixed once the cluster exists),
# NAMESPACE_RETENTION_SECONDS (86400), DYNAMIC_CONFIG_FILE (/etc/temporal/dynamicconfig.yaml).
set -eu
: "${POSTGRES_SEEDS:?POSTGRES_SEEDS names the PostgreSQL host}"
DB_PORT="${DB_PORT:-5432}" DBNAME="${DBNAME:-temporal}" VISIBILITY_DBNAME="${VISIBILITY_DBNAME:-temporal_visibility}"
export SQL_PASSWORD="${POSTGRES_PWD:-}"
tool() { db="$1"; shift; temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "${POSTGRES_USER:?}" --db "$db" "$@"; }

tries=0
until tool "$DBNAME" create-database >/tmp/create.log 2>&1 || grep -q "already exists" /tmp/create.log; do
  tries=$((tries + 1))
  [ "$tries" -lt 60 ] || { cat /tmp/create.log >&2; exit 1; }
  sleep 2
done
tool "$VISIBILITY_DBNAME" create-database >/tmp/create.log 2>&1 || grep -q "already exists" /tmp/create.log
for pair in "$DBNAME:temporal" "$VISIBILITY_DBNAME:visibility"; do
  db="${pair%%:*}" schema="${pair#*:}"
  tool "$db" setup-schema -v 0.0
  tool "$db" update-schema --schema-name "postgresql/v12/$schema"
done

ip="$(hostname -i | awk '{print $1}')"
store() {
  cat <<YAML
      sql:
        pluginName: postgres12
        databaseName: $1
        connectAddr: "$POSTGRES_SEEDS:$DB_PORT"
        connectProtocol: tcp
        user: "$POSTGRES_USER"
        password: "$SQL_PASSWORD"
        maxConns: $2
        maxIdleConns: $2
        maxConnLifetime: 1h
YAML
}
service() {
  cat <<YAML
  $1:
    rpc:
      grpcPort: $2
      membershipPort: $3
      bindOnIP: 0.0.0.0
YAML
}
config=/tmp/temporal-server.yaml
{
  cat <<YAML
log:
  stdout: true
  level: warn
persistence:
  defaultStore: default
  visibilityStore: visibility
  numHistoryShards: ${NUM_HISTORY_SHARDS:-4}
  datastores:
    default:
$(store "$DBNAME" 20)
    visibility:
$(store "$VISIBILITY_DBNAME" 4)
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: "$ip"
services:
YAML
  service frontend 7233 6933
  echo "      httpPort: 7243"
  service history 7234 6934
  service matching 7235 6935
  service worker 7239 6939
  cat <<YAML
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: 127.0.0.1:7233
dcRedirectionPolicy:
  policy: noop
dynamicConfigClient:
  filepath: ${DYNAMIC_CONFIG_FILE:-/etc/temporal/dynamicconfig.yaml}
  pollInterval: 10s
YAML
} > "$config"

# the namespace, once the frontend answers (its HTTP API; a restart finds the namespace there)
(
  api=http://127.0.0.1:7243/api/v1/namespaces
  for _ in $(seq 1 120); do
    if curl -fsS -o /dev/null "$api/default"; then exit 0; fi
    curl -fsS -o /dev/null -X POST "$api" -H 'content-type: application/json' \
      -d "{\"namespace\":\"default\",\"workflowExecutionRetentionPeriod\":\"${NAMESPACE_RETENTION_SECONDS:-86400}s\"}" && exit 0
    sleep 1
  done
  echo "temporal-entrypoint: the default namespace could not be registered" >&2
) &

exec temporal-server --config-file "$config" --allow-no-auth start
