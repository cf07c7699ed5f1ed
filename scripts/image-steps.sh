#!/usr/bin/env bash
# The Docker image's install and build steps, run without a Docker engine: the RUN lines of the
# Dockerfile's `build` and `deps` stages, read from the Dockerfile itself, in copies of what its COPY
# lines bring in. Then the runtime image's command (node dist/main.js, production dependencies only)
# must boot and answer /health/ and the dashboard.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=$(mktemp -d)
trap 'kill "${service:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

# The RUN commands of one stage, in order.
run_lines() {
  awk -v stage="$1" '/^FROM /{inside = ($0 ~ (" AS " stage "$"))} inside && /^RUN /{sub(/^RUN /, ""); print}' Dockerfile
}
run_stage() {
  local stage=$1 dir=$2 line
  while IFS= read -r line; do
    echo "[$stage] $line"
    # A cache of its own: the deps stage ends with `npm cache clean --force`, which must not empty the machine's.
    (cd "$dir" && npm_config_cache="$work/npm-cache" bash -c "$line")
  done < <(run_lines "$stage")
}

mkdir -p "$work/build" "$work/runtime"
cp -r "$(npm config get cache)" "$work/npm-cache" 2>/dev/null || true
cp -r package.json package-lock.json tsconfig.json tsconfig.build.json src web "$work/build/"
rm -rf "$work/build/web/dist" "$work/build/web/node_modules"
run_stage build "$work/build"
cp package.json package-lock.json "$work/runtime/"
run_stage deps "$work/runtime"
cp -r "$work/build/dist" "$work/runtime/dist"
mkdir -p "$work/runtime/web" && cp -r "$work/build/web/dist" "$work/runtime/web/dist"

port=$(node -e 'const s=require("net").createServer().listen(0,()=>{console.log(s.address().port);s.close()})')
# No PostgreSQL here: the embedded store, allowed explicitly in production for this one instance.
(cd "$work/runtime" && NODE_ENV=production JWT_SECRET=image-steps-secret-of-at-least-32-bytes PORT=$port \
  EMBEDDED_STORE_IN_PRODUCTION=true DATA_DIR="$work/data" exec node dist/main.js > "$work/service.log" 2>&1) &
service=$!
for _ in $(seq 1 60); do
  curl -fsS "http://127.0.0.1:$port/health/" >/dev/null 2>&1 && break
  sleep 1
done
curl -fsS "http://127.0.0.1:$port/health/" || { cat "$work/service.log"; exit 1; }
echo
curl -fsS "http://127.0.0.1:$port/app/" | grep -q '<div id="root">' || { echo "the dashboard is not served" >&2; exit 1; }
echo "image steps: built, installed with production dependencies only, booted on $(node --version), answered /health/ and /app/"
