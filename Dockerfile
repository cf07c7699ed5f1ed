# syntax=docker/dockerfile:1.7
# Knowledge Query Service: build with every dependency, run with production dependencies only, as the
# unprivileged `node` user. `docker build -t knowledge-query-service .`

ARG NODE_IMAGE=node:24-bookworm-slim

# 1. Compile the service (tsc) and the dashboard (vite) with the dev dependencies.
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY web ./web
RUN npm run build

# 2. Production dependencies only (prebuilt native modules such as @node-rs/argon2 need no scripts).
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force

# 3. The runtime image: compiled JS, the built dashboard, production node_modules; no compiler, no npm cache.
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    PORT=3000 \
    DATA_DIR=/tmp/kqs-data
WORKDIR /app
COPY --from=deps --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist ./dist
COPY --from=build --chown=root:root /app/web/dist ./web/dist
COPY --chown=root:root package.json ./
# Files stay root-owned and read-only to the process; it writes nothing but logs (stdout) unless it
# runs on the embedded store, under DATA_DIR: production needs DATABASE_URL, or
# EMBEDDED_STORE_IN_PRODUCTION=true for a single instance on the embedded store.
USER node
EXPOSE 3000
# Liveness for plain Docker; Kubernetes uses its own probes (deploy/kubernetes/deployment.yaml).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health/').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# node is PID 1 and handles SIGTERM itself (readiness 503, drain, exit 0): no shell wrapper.
# --max-semi-space-size=16: Node 24 sizes the young generation from the heap limit (3 x 64 MB here,
# Node 20 3 x 16 MB), which took the service 250 -> 317 MB under the abuse bench; 16 is Node 20's own.
CMD ["node", "--max-semi-space-size=16", "dist/main.js"]
