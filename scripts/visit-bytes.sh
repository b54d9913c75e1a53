#!/bin/bash
# The bytes a visit of the Opennet map moves (docs/performance.md, issue 45): its five GeoJSON layers
# with a box, on a 3,000-access-point synthetic network, from the preview and Debian's nginx, Apache and
# Caddy (standalone, ports 8791-8794), without and with gzip accepted. Works in a new temporary folder
# it removes at the end. Usage: scripts/visit-bytes.sh
set -e
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$(dirname "$0")/.."
node --import tsx scripts/synth.ts --aps 3000 --seed 7 --out $W/dump >/dev/null
node --import tsx src/cli/main.ts build --data $W/dump --out $W/www --brand opennet --default-status online >/dev/null 2>&1
chmod -R o+rX $W
M="node --import tsx src/cli/main.ts host-config"

$M nginx --data $W/dump --default-status online --standalone --root $W/www --port 8791 --user root:root > $W/nginx.conf
$M apache --data $W/dump --default-status online --standalone --root $W/www --port 8792 --user www-data > $W/apache.conf
$M caddy --data $W/dump --default-status online --standalone --root $W/www --port 8793 > $W/Caddyfile
nginx -p $W -c $W/nginx.conf -g 'daemon off;' & NG=$!
(cd $W && apache2 -X -d $W -f $W/apache.conf) & AP=$!
caddy run --config $W/Caddyfile --adapter caddyfile > $W/caddy.log 2>&1 & CA=$!
node --import tsx src/cli/main.ts preview --dir $W/www --port 8794 > /dev/null 2>&1 & PR=$!
sleep 5
BOX="11.9,53.9,12.3,54.3"
for server in preview:8794 nginx:8791 apache:8792 caddy:8793; do
  name=${server%%:*}; port=${server##*:}
  for ae in identity gzip; do
    total=0
    for layer in "/api/v1/link/?" "/api/v1/accesspoint/?status=online&" "/api/v1/accesspoint/?status=flapping&" "/api/v1/accesspoint/?status=offline&" "/api/v1/site/?"; do
      n=$(curl -s -o /dev/null -H "Accept-Encoding: $ae" -w "%{size_download}+%{size_header}" "http://127.0.0.1:$port${layer}data_format=geojson&in_bbox=$BOX")
      total=$((total + n))
    done
    echo "$name $ae $total"
  done
done
kill $NG $AP $CA $PR 2>/dev/null; pkill -f "apache2 -X -d $W" || true
