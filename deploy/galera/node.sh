#!/bin/sh
# Starts a node of docker-compose.yml's galera profile through the image's own entrypoint. The
# node given GALERA_BOOTSTRAP=1 starts a new cluster when it holds no state yet, or when it was
# the last to stop (its grastate.dat says safe_to_bootstrap: 1); otherwise, and on every other
# node, it joins the others. A cluster that lost every node at once needs an operator to pick
# the most advanced one (docs/scaling.md#mariadb-galera).
set -e
state=/var/lib/mysql/grastate.dat
if [ "$GALERA_BOOTSTRAP" = 1 ] && { [ ! -f "$state" ] || grep -q '^safe_to_bootstrap: 1' "$state"; }; then
  set -- "$@" --wsrep-new-cluster
fi
exec docker-entrypoint.sh "$@"
