#!/usr/bin/env bash
# The Redis topologies the Sentinel and Cluster tests run on (docs/development.md), made of
# Debian's redis-server on local ports beside the 6379 of the other tests:
#   Sentinel: master 16380 and replica 16381 of "mebmaster", Sentinels 26380-26382;
#   Cluster: six nodes 17001-17006 (bus ports 27001-27006), three masters holding every slot,
#   each with a replica to promote.
# `start` (the default) starts what does not answer and leaves the rest: idempotent, and it
# brings back a server a failover test killed (Sentinel, or the Cluster itself, makes it a
# replica of the promoted one), then waits until a next failover is possible. `stop` shuts
# everything down. Data lives under REDIS_TOPOLOGY_DIR.
set -euo pipefail

DIR="${REDIS_TOPOLOGY_DIR:-${TMPDIR:-/tmp}/meb-redis-topologies}"
SENTINEL_NAME=mebmaster
DATA_PORTS=(16380 16381)
SENTINEL_PORTS=(26380 26381 26382)
CLUSTER_PORTS=(17001 17002 17003 17004 17005 17006)
CLUSTER_MASTERS=3

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

# One field of a node's CLUSTER INFO (lines end in CR).
cluster_info() { redis-cli -p "$1" cluster info 2>/dev/null | tr -d '\r' | sed -n "s/^$2://p"; }

# Every node is one of the same six-node Cluster with every slot assigned (what a start
# finds after a failover test: the killed node comes back with its nodes.conf).
cluster_formed() {
  local port
  for port in "${CLUSTER_PORTS[@]}"; do
    [ "$(cluster_info "$port" cluster_known_nodes)" = "${#CLUSTER_PORTS[@]}" ] || return 1
    [ "$(cluster_info "$port" cluster_slots_assigned)" = 16384 ] || return 1
  done
}

# A next failover is possible: every node sees the Cluster ok, every node it knows connected
# and none failing, and each of the three masters has a replica in sync to promote.
cluster_sound() {
  local port masters=0 repl
  for port in "${CLUSTER_PORTS[@]}"; do
    [ "$(cluster_info "$port" cluster_state)" = ok ] || return 1
    # `cluster nodes`: id addr flags master ping pong epoch link slots...
    redis-cli -p "$port" cluster nodes | awk '$3 ~ /fail|handshake|noaddr/ || $8 != "connected" { bad = 1 } END { exit bad }' ||
      return 1
    repl=$(redis-cli -p "$port" info replication | tr -d '\r')
    case "$repl" in
      *role:master*)
        masters=$((masters + 1))
        grep -q '^slave0:.*state=online' <<<"$repl" || return 1
        ;;
      *) grep -q '^master_link_status:up' <<<"$repl" || return 1 ;;
    esac
  done
  [ "$masters" = "$CLUSTER_MASTERS" ]
}

start_cluster() {
  local port
  for port in "${CLUSTER_PORTS[@]}"; do
    answers "$port" && continue
    # A short node timeout makes a failover take seconds; validity factor 0 lets a replica be
    # promoted however long it was cut off from its master.
    server "$port" --cluster-enabled yes --cluster-config-file "$DIR/$port/nodes.conf" \
      --cluster-node-timeout 2000 --cluster-replica-validity-factor 0
  done
  for port in "${CLUSTER_PORTS[@]}"; do wait_for answers "$port"; done
  if ! cluster_formed; then
    # Empty nodes, or another Cluster (an earlier three-master one): made anew.
    for port in "${CLUSTER_PORTS[@]}"; do
      # A master holding keys refuses a reset, and a replica a FLUSHALL (it resets empty).
      redis-cli -p "$port" flushall >/dev/null 2>&1 || true
      redis-cli -p "$port" cluster reset hard >/dev/null
    done
    local nodes=()
    for port in "${CLUSTER_PORTS[@]}"; do nodes+=("127.0.0.1:$port"); done
    # The first three given are the masters; all on one host, each replica is another's port.
    redis-cli --cluster create "${nodes[@]}" --cluster-replicas 1 --cluster-yes >/dev/null
  fi
  # A replica comes back with a full sync from its master, and the Cluster's gossip clears a
  # returned node's failure flag within a node timeout or two.
  WAIT_TRIES=600 wait_for cluster_sound
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
