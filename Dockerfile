# One image for the three processes; docker-compose.yml picks the command.

# The web console (console/, docs/console.md) is built here, with the dev dependencies (Vite, Preact) that
# the image itself does without; only its output, dist/console, is copied on.
FROM node:24-slim AS console
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY console ./console
RUN npm run build:console

FROM node:24-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY catalog ./catalog
COPY src ./src
COPY workers ./workers
COPY --from=console /app/dist/console ./dist/console
USER node
CMD ["node", "--max-semi-space-size=32", "--max-old-space-size=1536", "src/server.ts"]
