#!/usr/bin/env bash
# MariaDB runs on these machines already; start it if it has stopped, then wait for it.
set -euo pipefail
if ! mysqladmin -h127.0.0.1 -uroot ping >/dev/null 2>&1; then
    start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd
fi
for _ in $(seq 60); do
    mysqladmin -h127.0.0.1 -uroot ping >/dev/null 2>&1 && exit 0
    sleep 1
done
echo "MariaDB did not answer at 127.0.0.1:3306" >&2
exit 1
