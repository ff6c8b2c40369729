/**
 * The `chaos` lane: one campaign of about two minutes with a fixed seed on one Redis (docs/chaos.md),
 * whose every invariant must hold. A broken one fails the test with the invariant table and the
 * offending requests, with their records and the faults just before them.
 */
import { expect, it } from 'vitest';
import { Campaign } from './run-campaign.ts';

/** The lane's seed and length: the same schedule and traffic every run (`npm run chaos -- --seed 20261201 --seconds 100` replays it). */
const SEED = 20261201;
const SECONDS = 100;

it(`holds every money invariant under seeded faults (seed ${SEED}, ${SECONDS} s, one Redis)`, { timeout: 330_000 }, async () => {
  const campaign = new Campaign({ seed: SEED, seconds: SECONDS, webs: 2, cluster: false, json: false }, (line) => process.stdout.write(`[chaos] ${line}\n`));
  const result = await campaign.run();
  const report = `\n${result.table}\n${result.details}\n\nreplay: npm run chaos -- --seed ${SEED} --seconds ${SECONDS}`;
  process.stdout.write(`${report}\n`);
  expect(result.held, `invariants broken:${report}`).toBe(true);
});
