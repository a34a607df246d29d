# One image for the gateway, every service and every worker; SERVICES picks what a container runs
# (SERVICES=api, SERVICES=labels, SERVICES=workers/irc-sender; unset = everything in one process).
#
#   docker build -t gitlab-v3-service .
#   docker run --rm -p 3000:3000 -e SERVICES= gitlab-v3-service     # all-in-one, embedded defaults

# ---- build: full install, TypeScript compiled into dist/ (mirrors the source tree) ----------------
FROM node:24-alpine AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# Only the service's compiled JavaScript goes on (tsconfig.build.json: no benchmark harness, no
# scripts, no test support), without source maps or build info.
RUN npm run build \
	&& rm -rf dist/.tsbuildinfo \
	&& find dist -name '*.map' -delete

# ---- deps: production dependencies only ----------------------------------------------------------
FROM node:24-alpine AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

# ---- runtime ------------------------------------------------------------------------------------
FROM node:24-alpine AS runtime
ENV NODE_ENV=production \
	SERVICEDIR=services \
	DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /src/dist ./
COPY package.json ./
# DATA_DIR must exist and belong to the app user: named volumes (compose) copy this ownership, and
# Kubernetes mounts an emptyDir here (plus the shared artifacts volume at /data/artifacts).
RUN mkdir -p /data/artifacts /data/mail && chown -R 1000:1000 /data
# The image's `node` user, numeric so that Kubernetes can verify runAsNonRoot.
USER 1000:1000
# PORT (gateway HTTP), HEALTH_PORT (/live, /ready), METRICS_PORT (/metrics).
EXPOSE 3000 3001 3030
# moleculer-runner itself is PID 1 (exec form, no npm, no shell), so SIGTERM reaches the broker,
# which stops taking requests, finishes in-flight ones and channel messages, and exits 0.
CMD ["node", "node_modules/moleculer/bin/moleculer-runner.js", "--config", "moleculer.config.js"]
