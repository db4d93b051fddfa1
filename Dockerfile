# Build with the same npm scripts CI uses, then ship production dependencies only.
FROM node:20-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 compiles its native addon when no prebuilt binary can be fetched.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts ./scripts
# The operator console's sources; the build puts it in dist/console.
COPY web ./web
# `npm ci` runs the `prepare` script, which is `npm run build`.
RUN npm ci && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/app/data
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY config ./config
COPY assets ./assets
RUN mkdir -p /app/data && chown node:node /app/data
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + process.env.PORT + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM drains live calls (DRAIN_TIMEOUT_MS); give the container runtime a stop timeout to match.
STOPSIGNAL SIGTERM
CMD ["node", "dist/main.js"]
