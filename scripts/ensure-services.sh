#!/usr/bin/env bash
# Makes sure MariaDB (or MySQL) and Redis answer on their local ports: starts them when they
# are installed but stopped, installs them from Debian/Ubuntu packages when missing, and gives
# the service's default database user (wrs/wrs) its rights. Safe to run again and again.
# Skipped for a service whose URL points at another host (DATABASE_URL / REDIS_URL).
set -euo pipefail

DB_HOST=127.0.0.1; DB_PORT=3306; REDIS_HOST=127.0.0.1; REDIS_PORT=6379
if [ -n "${DATABASE_URL:-}" ]; then
  hp=$(node -e 'const u=new URL(process.argv[1]);console.log(u.hostname, u.port||3306)' "$DATABASE_URL"); read -r DB_HOST DB_PORT <<<"$hp"
fi
if [ -n "${REDIS_URL:-}" ]; then
  hp=$(node -e 'const u=new URL(process.argv[1]);console.log(u.hostname, u.port||6379)' "$REDIS_URL"); read -r REDIS_HOST REDIS_PORT <<<"$hp"
fi
is_local() { [ "$1" = 127.0.0.1 ] || [ "$1" = localhost ] || [ "$1" = ::1 ]; }
port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }
SUDO=""; [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null && SUDO="sudo"
log() { echo "[ensure-services] $*" >&2; }

wait_port() {
  for _ in $(seq 1 60); do port_open "$1" "$2" && return 0; sleep 0.5; done
  log "nothing answers on $1:$2"; return 1
}

apt_install() {
  command -v apt-get >/dev/null || { log "cannot install $*: no apt-get; install it yourself"; exit 1; }
  log "installing $*"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

ensure_mariadb() {
  port_open "$DB_HOST" "$DB_PORT" && return 0
  is_local "$DB_HOST" || { log "database at $DB_HOST:$DB_PORT is not reachable"; exit 1; }
  if ! command -v mariadbd >/dev/null && [ ! -x /usr/sbin/mariadbd ] && [ ! -x /usr/sbin/mysqld ]; then
    apt_install mariadb-server
  fi
  log "starting MariaDB"
  $SUDO mkdir -p /run/mysqld && $SUDO chown mysql:mysql /run/mysqld 2>/dev/null || true
  if ! { command -v service >/dev/null && $SUDO service mariadb start >/dev/null 2>&1; }; then
    bin=/usr/sbin/mariadbd; [ -x "$bin" ] || bin=/usr/sbin/mysqld
    $SUDO start-stop-daemon --start --oknodo --background --exec "$bin"
  fi
  wait_port "$DB_HOST" "$DB_PORT"
}

grant_default_user() {
  # Only for a local server whose root we can reach through its socket (Debian's default).
  is_local "$DB_HOST" || return 0
  client=$(command -v mariadb || command -v mysql || true)
  [ -n "$client" ] || return 0
  $SUDO "$client" -uroot -e "SELECT 1" >/dev/null 2>&1 || return 0
  $SUDO "$client" -uroot -e "
    CREATE USER IF NOT EXISTS 'wrs'@'localhost' IDENTIFIED BY 'wrs';
    CREATE USER IF NOT EXISTS 'wrs'@'127.0.0.1' IDENTIFIED BY 'wrs';
    GRANT ALL PRIVILEGES ON *.* TO 'wrs'@'localhost';
    GRANT ALL PRIVILEGES ON *.* TO 'wrs'@'127.0.0.1';" >/dev/null
}

ensure_redis() {
  port_open "$REDIS_HOST" "$REDIS_PORT" && return 0
  is_local "$REDIS_HOST" || { log "Redis at $REDIS_HOST:$REDIS_PORT is not reachable"; exit 1; }
  command -v redis-server >/dev/null || apt_install redis-server
  log "starting Redis"
  $SUDO mkdir -p /var/lib/redis /var/log/redis
  $SUDO redis-server --daemonize yes --bind 127.0.0.1 -::1 --port "$REDIS_PORT" --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  wait_port "$REDIS_HOST" "$REDIS_PORT"
}

ensure_mariadb
grant_default_user
ensure_redis
log "MariaDB at $DB_HOST:$DB_PORT and Redis at $REDIS_HOST:$REDIS_PORT are up"
