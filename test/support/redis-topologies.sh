#!/usr/bin/env bash
# The Redis topologies the Sentinel and Cluster tests run on (docs/development.md), made of
# Debian's redis-server on local ports beside the 6379 of the other tests:
#   Sentinel: master 16380 and replica 16381 of "mebmaster", Sentinels 26380-26382;
#   Cluster: three masters 17001-17003 (bus ports 27001-27003), every slot assigned.
# `start` (the default) starts what does not answer and leaves the rest: idempotent, and it
# brings back a server a failover test shut down (Sentinel makes it a replica of the new
# master). `stop` shuts everything down. Data lives under REDIS_TOPOLOGY_DIR.
set -euo pipefail

DIR="${REDIS_TOPOLOGY_DIR:-${TMPDIR:-/tmp}/meb-redis-topologies}"
SENTINEL_NAME=mebmaster
DATA_PORTS=(16380 16381)
SENTINEL_PORTS=(26380 26381 26382)
CLUSTER_PORTS=(17001 17002 17003)

answers() { redis-cli -h 127.0.0.1 -p "$1" ping 2>/dev/null | grep -q PONG; }

wait_for() {
  for _ in $(seq 1 "${WAIT_TRIES:-100}"); do "$@" && return 0; sleep 0.1; done
  echo "redis-topologies: gave up waiting for: $*" >&2
  return 1
}

server() {
  local port=$1
  shift
  mkdir -p "$DIR/$port"
  redis-server --daemonize yes --bind 127.0.0.1 --port "$port" --dir "$DIR/$port" \
    --save "" --appendonly no --logfile "$DIR/$port/redis.log" \
    --pidfile "$DIR/$port/redis.pid" "$@"
}

# The current master as the Sentinels see it (after a failover it is no longer 16380).
current_master_port() {
  local port
  for port in "${SENTINEL_PORTS[@]}"; do
    if answers "$port"; then
      redis-cli -p "$port" sentinel get-master-addr-by-name "$SENTINEL_NAME" 2>/dev/null | sed -n 2p
      return 0
    fi
  done
}

start_sentinel_group() {
  local master=16380 port
  local known
  known=$(current_master_port || true)
  [ -n "$known" ] && answers "$known" && master=$known
  for port in "${DATA_PORTS[@]}"; do
    answers "$port" && continue
    if [ "$port" = "$master" ]; then server "$port"; else server "$port" --replicaof 127.0.0.1 "$master"; fi
  done
  for port in "${SENTINEL_PORTS[@]}"; do
    answers "$port" && continue
    mkdir -p "$DIR/$port"
    # Sentinel rewrites its own file; a fresh one names the master a start finds.
    cat >"$DIR/$port/sentinel.conf" <<EOF
port $port
bind 127.0.0.1
dir $DIR/$port
logfile $DIR/$port/sentinel.log
pidfile $DIR/$port/sentinel.pid
daemonize yes
sentinel monitor $SENTINEL_NAME 127.0.0.1 $master 2
sentinel down-after-milliseconds $SENTINEL_NAME 1000
sentinel failover-timeout $SENTINEL_NAME 5000
sentinel parallel-syncs $SENTINEL_NAME 1
EOF
    redis-server "$DIR/$port/sentinel.conf" --sentinel
  done
  for port in "${DATA_PORTS[@]}" "${SENTINEL_PORTS[@]}"; do wait_for answers "$port"; done
  # A replica is there to be promoted once it has the master's data.
  wait_for sh -c "redis-cli -p $(current_master_port) info replication | grep -q '^connected_slaves:1'"
  # A failover needs every Sentinel to know the replica (found in the master's INFO, asked
  # every 10 s) and the other Sentinels (their hellos, every 2 s): a master killed before
  # that is never replaced.
  for port in "${SENTINEL_PORTS[@]}"; do WAIT_TRIES=300 wait_for sentinel_ready "$port"; done
}

# `sentinel master` answers field, value, field, value... on lines of their own.
sentinel_field() {
  redis-cli -p "$1" sentinel master "$SENTINEL_NAME" 2>/dev/null | sed -n "/^$2\$/{n;p;}"
}

sentinel_ready() {
  [ "$(sentinel_field "$1" num-slaves)" -ge 1 ] 2>/dev/null &&
    [ "$(sentinel_field "$1" num-other-sentinels)" -ge 2 ] 2>/dev/null &&
    # Every replica it knows up: flags exactly "slave" (not s_down, disconnected).
    ! redis-cli -p "$1" sentinel replicas "$SENTINEL_NAME" | sed -n '/^flags$/{n;p;}' | grep -qvx slave
}

cluster_ok() { redis-cli -p "${CLUSTER_PORTS[0]}" cluster info 2>/dev/null | grep -q 'cluster_state:ok'; }

start_cluster() {
  local port
  for port in "${CLUSTER_PORTS[@]}"; do
    answers "$port" && continue
    server "$port" --cluster-enabled yes --cluster-config-file "$DIR/$port/nodes.conf" \
      --cluster-node-timeout 2000
  done
  for port in "${CLUSTER_PORTS[@]}"; do wait_for answers "$port"; done
  cluster_ok && return 0
  # Slots not (all) assigned: a cluster made anew from empty nodes.
  for port in "${CLUSTER_PORTS[@]}"; do
    redis-cli -p "$port" flushall >/dev/null
    redis-cli -p "$port" cluster reset hard >/dev/null
  done
  local nodes=()
  for port in "${CLUSTER_PORTS[@]}"; do nodes+=("127.0.0.1:$port"); done
  redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >/dev/null
  wait_for cluster_ok
}

stop_all() {
  local port
  for port in "${SENTINEL_PORTS[@]}" "${DATA_PORTS[@]}" "${CLUSTER_PORTS[@]}"; do
    answers "$port" && redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
  done
  rm -rf "$DIR"
}

case "${1:-start}" in
  start)
    start_sentinel_group
    start_cluster
    echo "Sentinel: REDIS_SENTINELS=127.0.0.1:26380,127.0.0.1:26381,127.0.0.1:26382 REDIS_SENTINEL_NAME=$SENTINEL_NAME"
    echo "Cluster: REDIS_CLUSTER_NODES=127.0.0.1:17001,127.0.0.1:17002,127.0.0.1:17003"
    ;;
  stop) stop_all ;;
  *)
    echo "usage: $0 [start|stop]" >&2
    exit 2
    ;;
esac
