# One image for the three processes; docker-compose.yml picks the command.
FROM node:24-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY bin ./bin
COPY catalog ./catalog
COPY src ./src
COPY workers ./workers
USER node
CMD ["node", "--max-semi-space-size=32", "--max-old-space-size=1536", "src/server.ts"]
