# syntax=docker/dockerfile:1
# One image for every role: the API (default), the worker and the migrations differ only in
# their command (see docker-compose.yml).

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The typed client is a workspace: the console is built on it.
COPY clients/typescript/package.json ./clients/typescript/
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY clients/typescript/tsconfig.json ./clients/typescript/
COPY clients/typescript/src ./clients/typescript/src
COPY tsconfig.json tsconfig.build.json knexfile.ts ./
COPY src ./src
COPY workers ./workers
COPY migrations ./migrations
COPY scripts/copy-assets.mjs scripts/build-console.mjs ./scripts/
COPY console ./console
# The docs page's Redoc bundle goes into dist/assets and the console's bundle into dist/console:
# the runtime image has no dev packages.
RUN npm run build -w workflow-run-client \
  && npx tsc -p tsconfig.build.json && npx tsc -p console/tsconfig.json \
  && node scripts/copy-assets.mjs && node scripts/build-console.mjs

FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY examples ./examples
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+(process.env.BASE_PATH||'')+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "dist/src/server.js"]
