/** The campaign's command line: `--seed S --seconds N [--webs 1|2] [--cluster] [--json]`. */

/** What one campaign runs. */
export interface CampaignOptions {
  /** Seeds the fault schedule and the traffic plan: the same seed replays both. */
  seed: number;
  /** How long traffic runs; faults stop some seconds before its end. */
  seconds: number;
  /** Web processes (1 or 2); there are always 2 workers. */
  webs: 1 | 2;
  /** A Redis Cluster of 3 masters with a replica each, instead of one Redis. */
  cluster: boolean;
  /** Also print one JSON line of everything at the end. */
  json: boolean;
}

/** The usage line, printed with exit code 2 on bad options. */
export const USAGE = `usage: npm run chaos -- --seed S --seconds N [--webs 1|2] [--cluster] [--json]

  --seed S       integer 0..4294967295: the fault schedule and the traffic mix (same seed, same campaign)
  --seconds N    integer 20..3600: how long traffic runs (faults stop some seconds before the end)
  --webs 1|2     web processes (default 2); there are always 2 workers
  --cluster      a Redis Cluster of 3 masters, each with a replica, instead of one Redis
  --json         also print one JSON line of everything at the end

exit codes: 0 every invariant held, 1 one broke (or the campaign could not run), 2 bad options`;

/** Thrown for a command line the campaign cannot run. */
export class OptionsError extends Error {}

function integer(name: string, value: string | undefined, min: number, max: number): number {
  if (value === undefined || !/^\d+$/.test(value)) throw new OptionsError(`${name} needs an integer, got ${value ?? 'nothing'}`);
  const number = Number(value);
  if (number < min || number > max) throw new OptionsError(`${name} must be within ${min}..${max}, got ${number}`);
  return number;
}

/** Reads the options after `node campaign.ts`; throws OptionsError naming what is wrong. */
export function parseOptions(argv: readonly string[]): CampaignOptions {
  let seed: number | null = null;
  let seconds: number | null = null;
  const options = { webs: 2 as 1 | 2, cluster: false, json: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const [name, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = () => inline ?? argv[++i];
    switch (name) {
      case '--seed':
        seed = integer('--seed', value(), 0, 4_294_967_295);
        break;
      case '--seconds':
        seconds = integer('--seconds', value(), 20, 3600);
        break;
      case '--webs':
        options.webs = integer('--webs', value(), 1, 2) as 1 | 2;
        break;
      case '--cluster':
        options.cluster = true;
        break;
      case '--json':
        options.json = true;
        break;
      default:
        throw new OptionsError(`unknown option ${arg}`);
    }
  }
  if (seed === null) throw new OptionsError('--seed is required');
  if (seconds === null) throw new OptionsError('--seconds is required');
  return { seed, seconds, ...options };
}
