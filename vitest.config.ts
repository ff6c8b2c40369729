import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Integration suites share one PostgreSQL and one Redis and start processes; run files one after another.
    fileParallelism: false,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    projects: [
      { extends: true, test: { name: 'redis', include: ['test/**/*.test.ts'], exclude: ['test/cluster/**'] } },
      // The end-to-end suites once more, with every gateway on a Redis Cluster of 3 masters and its queue in 4 shards.
      { extends: true, test: { name: 'cluster', include: ['test/e2e/**/*.test.ts', 'test/cluster/**/*.test.ts'], globalSetup: ['test/helpers/cluster-setup.ts'] } },
    ],
  },
});
