#!/usr/bin/env bash
# Stop the nginx that nginx-up.sh started in $DIR (by its recorded pid; SIGTERM = fast shutdown).
DIR=${DIR:-/tmp/rc1-nginx}
f="$DIR/master.pid"; [ -s "$f" ] || exit 0
pid=$(cat "$f")
kill -CONT "$pid" 2>/dev/null; kill "$pid" 2>/dev/null
for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
rm -f "$f"
