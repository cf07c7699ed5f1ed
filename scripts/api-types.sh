#!/usr/bin/env bash
# The dashboard's API types from an OpenAPI document: scripts/api-types.sh <openapi.json> <schema.d.ts>.
# Used by `npm run generate:api` (on the exported document) and test/openapi/api-client.e2e-spec.ts (on the
# served one), so both make the same file. Defaults do not make request fields required.
set -euo pipefail
cd "$(dirname "$0")/.."
exec node_modules/.bin/openapi-typescript "$1" --default-non-nullable false --output "$2"
