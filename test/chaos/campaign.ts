/**
 * `npm run chaos -- --seed S --seconds N [--webs 1|2] [--cluster] [--json]`: a seeded fault campaign
 * against real gateway processes, judged by the money invariants (docs/chaos.md). Exit 0 when every
 * invariant held, 1 when one broke (or the campaign could not run), 2 on bad options.
 */
import { OptionsError, parseOptions, USAGE, type CampaignOptions } from './options.ts';
import { Campaign } from './run-campaign.ts';

let options: CampaignOptions;
try {
  options = parseOptions(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof OptionsError)) throw error;
  process.stderr.write(`${error.message}\n\n${USAGE}\n`);
  process.exit(2);
}

const campaign = new Campaign(options, (line) => process.stdout.write(`${line}\n`));
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    interrupted = true;
    process.stderr.write(`\n${signal}: stopping everything the campaign started…\n`);
    void campaign.abort().finally(() => process.exit(130));
  });
}

try {
  const result = await campaign.run();
  process.stdout.write(`\n## Invariants (seed ${options.seed}, ${options.seconds} s${options.cluster ? ', cluster' : ''})\n\n${result.table}\n`);
  if (!result.held) process.stdout.write(`${result.details}\n`);
  process.stdout.write(
    `\n${
      result.held
        ? 'every invariant held'
        : `broken: ${result.results
            .filter((r) => !r.held)
            .map((r) => r.id)
            .join(', ')}`
    }\n`,
  );
  if (options.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(result.held ? 0 : 1);
} catch (error) {
  if (interrupted) await new Promise(() => undefined);
  process.stderr.write(`the campaign could not run: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
}
