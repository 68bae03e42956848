# syntax=docker/dockerfile:1.7
# The gateway image. Build from the repository root:
#   docker build -f deploy/docker/gateway.Dockerfile -t crm/gateway:dev .
# Stage 1 installs the production npm dependencies (npm ci against package-lock.json, the
# project's only lockfile); stage 2 is the Bun runtime with just this service and the libs.

FROM node:22-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY libs ./libs
COPY services ./services
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error

FROM oven/bun:1.4.5-slim
WORKDIR /app
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    GATEWAY_PORT=8080 \
    GATEWAY_OPS_PORT=9090
COPY --from=deps /app/package.json ./package.json
COPY --from=deps /app/node_modules ./node_modules
COPY --from=deps /app/libs ./libs
COPY --from=deps /app/services/gateway ./services/gateway
# The image's unprivileged user (uid 1000); nothing is written to the file system at run time.
USER bun
EXPOSE 8080
# Operations port (/metrics, /livez, /readyz): for probes and Prometheus, never publish it.
EXPOSE 9090
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s \
  CMD ["bun", "-e", "const r = await fetch('http://127.0.0.1:9090/livez').catch(() => null); process.exit(r?.ok ? 0 : 1)"]
# SIGTERM drains in-flight requests and flushes outbox/audit work, then exits 0 (contract §18).
STOPSIGNAL SIGTERM
CMD ["bun", "services/gateway/src/main.ts"]
