#!/usr/bin/env bash
# Virtuoso (Debian's virtuoso-opensource) on loopback, holding the shipped KG, for the KG tests
# on a real SPARQL endpoint (LIFELONG_GYM_SPARQL_URL, default http://127.0.0.1:8890/sparql).
# Idempotent: reuses a running server and reloads the graph only when the shipped file changed.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=/var/lib/lifelong-gym/virtuoso
CONFIG="$PWD/.ci/virtuoso.ini"
GRAPH="$PWD/lifelong_gym/data/kg/graph.nt.gz"
GRAPH_IRI=http://rdf.freebase.com
SPARQL=http://127.0.0.1:8890/sparql

if ! command -v virtuoso-t >/dev/null; then
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q virtuoso-opensource
    # The package may start its own instance on the same ports; ours uses .ci/virtuoso.ini.
    if [ -e /var/lib/virtuoso-opensource-7/db/virtuoso.lck ]; then
        /etc/init.d/virtuoso-opensource-7 stop || true
    fi
fi
mkdir -p "$ROOT/load"
isql() { isql-vt 127.0.0.1:1111 dba dba "exec=$1" >/dev/null; }

if ! isql "SELECT 1;" 2>/dev/null; then
    (cd "$ROOT" && virtuoso-t +configfile "$CONFIG" +wait)
fi
for _ in $(seq 60); do isql "SELECT 1;" 2>/dev/null && break; sleep 1; done

CHECKSUM=$(sha256sum "$GRAPH" | cut -d' ' -f1)
if [ "$(cat "$ROOT/loaded.sha256" 2>/dev/null)" != "$CHECKSUM" ]; then
    cp "$GRAPH" "$ROOT/load/graph.nt.gz"
    isql "SPARQL CLEAR GRAPH <$GRAPH_IRI>;"
    isql "DELETE FROM DB.DBA.load_list;"
    isql "ld_dir('$ROOT/load', 'graph.nt.gz', '$GRAPH_IRI');"
    isql "rdf_loader_run();"
    isql "checkpoint;"
    echo "$CHECKSUM" > "$ROOT/loaded.sha256"
fi

# Ready when the endpoint answers and holds the graph (an entity name is there).
ASK='ASK { ?s <http://rdf.freebase.com/ns/type.object.name> ?o }'
for _ in $(seq 60); do
    if python - "$SPARQL" "$ASK" <<'PY' 2>/dev/null; then
import json, sys, urllib.parse, urllib.request
url = sys.argv[1] + "?" + urllib.parse.urlencode({"query": sys.argv[2]})
request = urllib.request.Request(url, headers={"Accept": "application/sparql-results+json"})
with urllib.request.urlopen(request, timeout=5) as response:
    sys.exit(0 if json.load(response)["boolean"] else 1)
PY
        exit 0
    fi
    sleep 1
done
echo "Virtuoso's SPARQL endpoint at $SPARQL did not answer with the KG; see $ROOT/virtuoso.log" >&2
exit 1
