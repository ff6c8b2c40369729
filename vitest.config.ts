import { defineConfig } from 'vitest/config';

/**
 * The end-to-end suites whose behaviour depends on Redis Cluster topology, run a second time with every
 * gateway on a Redis Cluster of 3 masters and its queue in 4 shards (docs/architecture.md, "Tests").
 * The other e2e suites exercise nothing a cluster changes, and run once, on one Redis.
 */
const CLUSTER_E2E = [
  // The request path on a cluster: reply channels over sharded pub/sub, the per-request streams, the relay.
  'test/e2e/openai-sdk.test.ts',
  // Admission and settlement scripts on the tenant's slot under concurrency; Last-Event-ID resume from the stream.
  'test/e2e/budgets-idempotency.test.ts',
  // Tenants spread over queue shards on different masters, each shard's outbox drained.
  'test/e2e/queue-shards.test.ts',
  // Several requests in one job: cancellation marks and settlement across the shard's and the tenants' slots.
  'test/e2e/shared-jobs.test.ts',
  // Retries, pickup deadlines, cancellation and stalled-job recovery on a hash-tagged queue, per shard.
  'test/e2e/faults.test.ts',
  // Backlog gauges read every shard's queue and outbox, on every master, at scrape time.
  'test/e2e/metrics.test.ts',
  // The sharded outbox scripts, and an older unsharded outbox key that lives in another slot.
  'test/e2e/usage-outbox.test.ts',
  // A graceful stop closes one BullMQ worker per shard, on blocking connections to several masters.
  'test/e2e/shutdown.test.ts',
  // Cache invalidation (plain pub/sub, which a cluster forwards to every node) reaching the other web process.
  'test/e2e/tenant-key-admin.test.ts',
  // The board lists every shard's queue and reads Redis's stats through a cluster client.
  'test/e2e/queue-board.test.ts',
  // Each shard's webhook queue (hash-tagged like the request queue) fed by that shard's outbox, tenants on different masters.
  'test/e2e/webhooks.test.ts',
  // A kept response's state written by the request's last script call on its tenant's slot; background jobs on their shard; a stream resumed from its events.
  'test/e2e/responses-background.test.ts',
  // The batch lane's queue per shard, its look at the shard's live queue, a line's result pushed with its usage record by the request's last script call.
  'test/e2e/batches.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    // The lanes run one after another (sequence.groupOrder): the later ones share one Redis and one
    // PostgreSQL and start processes, and this machine has two cores.
    projects: [
      {
        extends: true,
        // Pure code (translators, mappers, schemas) and the tooling checks: no Redis, no store, no process of ours; files in
        // parallel, in workers that keep their loaded modules from one file to the next (isolate: false; 8 s instead of 20 s
        // here, most of it was importing the same modules again). A unit test therefore leaves no global state behind.
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'test/tooling/**/*.test.ts'],
          fileParallelism: true,
          isolate: false,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        // Real Redis and PostgreSQL shared by every file: one file at a time.
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/contract/**/*.test.ts', 'test/fuzz/**/*.test.ts'],
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        // Web and worker processes driven by the official SDKs: one file at a time.
        test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'], fileParallelism: false, sequence: { groupOrder: 2 } },
      },
      {
        extends: true,
        // The cluster suites (each starts its own cluster) and CLUSTER_E2E on the shared one that globalSetup starts.
        test: {
          name: 'cluster',
          include: ['test/cluster/**/*.test.ts', ...CLUSTER_E2E],
          fileParallelism: false,
          globalSetup: ['test/helpers/cluster-setup.ts'],
          sequence: { groupOrder: 3 },
        },
      },
      {
        extends: true,
        // The console in the system's Chromium (test/helpers/browser.ts) against web and worker processes: one browser and
        // one gateway per file, one file at a time, after the other lanes.
        test: { name: 'browser', include: ['test/browser/**/*.test.ts'], fileParallelism: false, sequence: { groupOrder: 4 } },
      },
      {
        extends: true,
        // A seeded fault campaign (test/chaos/, docs/chaos.md): its own Redis, database and processes for about two
        // minutes, whose money invariants must hold; last, alone.
        test: { name: 'chaos', include: ['test/chaos/**/*.test.ts'], fileParallelism: false, sequence: { groupOrder: 5 } },
      },
    ],
  },
});
