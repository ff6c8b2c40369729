/**
 * The traffic of a campaign, drawn from its seed before it starts: when each request goes, from which
 * tenant, of which kind, with which prompt, key and client behaviour. The same seed gives the same plan;
 * what the gateway answers is the campaign's to observe. Also the tenants, whose budgets are sized from
 * the plan's expected spend so that refusals (402) come in its last part.
 */
import { Rng } from './prng.ts';
import { plannedAnswer } from './upstream.ts';

/** What a client does: one request, or a flow of several (an Idempotency-Key sent again, a stream resumed, a response polled). */
export type RequestKind =
  /** JSON or SSE, no key. */
  | 'plain'
  /** A stream the client abandons after some chunks (no key: the job is cancelled and recorded as such). */
  | 'stream-abort'
  /** With a key, answered, then sent again: it must replay, not run again. */
  | 'key-replay'
  /** With a key, dropped by the client mid-way (a network error), then sent again until answered. */
  | 'key-drop'
  /** A stream with a key, dropped after some chunks, then resumed with Last-Event-ID. */
  | 'key-resume'
  /** POST /v1/responses with background: true, polled until it ends. */
  | 'background'
  /** A chat completion of the tenant whose response cache is on, from a few prompts (so hits happen). */
  | 'cached';

/** One planned request. */
export interface PlannedRequest {
  n: number;
  /** ms after traffic starts. */
  at: number;
  tenant: string;
  kind: RequestKind;
  stream: boolean;
  model: string;
  prompt: string;
  maxTokens: number;
  key: string | null;
  /** The web process of the first attempt (later attempts take the next). */
  web: number;
  /** A stream dropped (or abandoned) after this many chunks. */
  dropAfterChunks: number;
  /** A JSON request dropped after this long. */
  dropAfterMs: number;
  /** Wait before sending a key again (after an answer or a drop). */
  againAfterMs: number;
  /** The cost it should have when it succeeds (micro-units), for sizing budgets. */
  expectedMicros: number;
}

/** One planned credit top-up of the prepaid tenant. */
export interface PlannedTopUp {
  at: number;
  id: string;
  amountMicros: number;
  /** Sent twice at once with the same id. */
  twiceAtOnce: boolean;
  /** Sent again with the same id this long after its answer (null: not). */
  againAfterMs: number | null;
}

/** A tenant of the campaign and its money settings. */
export interface TenantPlan {
  id: string;
  /** Budget policies: window and limit (micro-units). */
  budgets: Array<{ window: 'hour' | 'day'; limitMicros: number }>;
  /** Has a credit account (the prepaid tenant). */
  credit: boolean;
  /** Its response cache is on, and a hit costs this. */
  cacheHitPriceMicros: number | null;
}

/** The whole plan. */
export interface TrafficPlan {
  tenants: TenantPlan[];
  requests: PlannedRequest[];
  topUps: PlannedTopUp[];
  /** The first top-up, made before traffic starts. */
  openingCreditMicros: number;
}

/** Catalog prices of the fake models (test/helpers/test-catalog.ts): micro-units per token. */
export const PRICES: Record<string, { input: number; output: number }> = {
  'fake-gpt': { input: 1, output: 2 },
  'fake-backup': { input: 1, output: 2 },
};

const FILLER = ['argument', 'boundary', 'calendar', 'diagram', 'envelope', 'festival', 'glossary', 'horizon', 'inventory', 'junction', 'keyboard', 'landmark'];
const REQUESTS_PER_SECOND = 10;
const TOP_UP_EVERY_MS = 4_000;
const CACHE_PROMPTS = 6;
const HIT_PRICE_MICROS = 3;

/** The tenants' ids: budgets per hour, per hour and day, prepaid credit, the response cache. */
export const TENANTS = { hourly: 'chaos-hourly', daily: 'chaos-daily', prepaid: 'chaos-prepaid', cached: 'chaos-cached' } as const;

function prompt(rng: Rng, label: string, pace: number, words: number): string {
  const filler = Array.from({ length: rng.int(4, 12) }, () => rng.pick(FILLER)).join(' ');
  return `Chaos ${label} asks: ${filler} pace${pace} words${words}`;
}

function expected(model: string, text: string, maxTokens: number): number {
  const price = PRICES[model === 'fake-backup' ? 'fake-backup' : 'fake-gpt'] as { input: number; output: number };
  const answer = plannedAnswer(text, maxTokens);
  return answer.promptTokens * price.input + answer.text.length * price.output;
}

function planRequest(rng: Rng, n: number, at: number, webs: number, seed: number): PlannedRequest {
  const kind = rng.weighted<RequestKind>([
    ['plain', 40],
    ['stream-abort', 7],
    ['key-replay', 10],
    ['key-drop', 6],
    ['key-resume', 8],
    ['background', 8],
    ['cached', 14],
  ]);
  const tenant =
    kind === 'cached'
      ? TENANTS.cached
      : rng.weighted([
          [TENANTS.hourly, 3],
          [TENANTS.daily, 3],
          [TENANTS.prepaid, 3],
          [TENANTS.cached, 1],
        ] as const);
  const stream = kind === 'stream-abort' || kind === 'key-resume' ? true : kind === 'background' ? false : rng.chance(0.5);
  const model = rng.weighted([
    ['svc-flash', 5],
    ['fake-gpt', 3],
    ['svc-standard', 2],
  ] as const);
  const long = kind === 'stream-abort' || kind === 'key-resume' || kind === 'background';
  const pace = long ? rng.int(40, 90) : rng.int(10, 60);
  const words = long ? rng.int(8, 16) : rng.int(3, 14);
  const maxTokens = 24;
  const text =
    kind === 'cached' ? `Chaos cached question q${rng.int(1, CACHE_PROMPTS)}: glossary horizon landmark pace30 words8` : prompt(rng, `r${n}`, pace, words);
  const keyed = kind === 'key-replay' || kind === 'key-drop' || kind === 'key-resume' || (kind === 'background' && rng.chance(0.4));
  return {
    n,
    at,
    tenant,
    kind,
    stream,
    model: kind === 'cached' ? 'svc-flash' : model,
    prompt: text,
    maxTokens,
    key: keyed ? `chaos-${seed}-${n}` : null,
    web: rng.int(0, webs - 1),
    dropAfterChunks: rng.int(2, 5),
    dropAfterMs: rng.int(50, 400),
    againAfterMs: rng.int(100, 2500),
    expectedMicros: expected(model, text, maxTokens),
  };
}

/** Draws the plan of a campaign of `seconds` with `webs` web processes. */
export function planTraffic(seed: number, seconds: number, webs: number): TrafficPlan {
  const rng = new Rng(seed, 'traffic');
  const requests: PlannedRequest[] = [];
  for (let at = rng.exponential(1000 / REQUESTS_PER_SECOND), n = 1; at < seconds * 1000; at += rng.exponential(1000 / REQUESTS_PER_SECOND), n++) {
    requests.push(planRequest(rng, n, Math.round(at), webs, seed));
  }
  const spend = (tenant: string) => requests.filter((r) => r.tenant === tenant && r.kind !== 'stream-abort').reduce((sum, r) => sum + r.expectedMicros, 0);
  const prepaidSpend = spend(TENANTS.prepaid);
  const topUps: PlannedTopUp[] = [];
  for (let at = TOP_UP_EVERY_MS, i = 1; at < seconds * 1000; at += TOP_UP_EVERY_MS, i++) {
    topUps.push({
      at: at + rng.int(-1500, 1500),
      id: `chaos-topup-${seed}-${i}`,
      amountMicros: Math.max(100, Math.round((prepaidSpend * 0.6 * TOP_UP_EVERY_MS) / (seconds * 1000))),
      twiceAtOnce: rng.chance(0.5),
      againAfterMs: rng.chance(0.25) ? rng.int(500, 3000) : null,
    });
  }
  const tenants: TenantPlan[] = [
    {
      id: TENANTS.hourly,
      budgets: [{ window: 'hour', limitMicros: Math.max(500, Math.round(spend(TENANTS.hourly) * 0.7)) }],
      credit: false,
      cacheHitPriceMicros: null,
    },
    {
      id: TENANTS.daily,
      budgets: [
        { window: 'day', limitMicros: Math.max(500, Math.round(spend(TENANTS.daily) * 0.75)) },
        { window: 'hour', limitMicros: Math.max(500, Math.round(spend(TENANTS.daily) * 0.9)) },
      ],
      credit: false,
      cacheHitPriceMicros: null,
    },
    { id: TENANTS.prepaid, budgets: [], credit: true, cacheHitPriceMicros: null },
    {
      id: TENANTS.cached,
      budgets: [{ window: 'day', limitMicros: Math.max(500, Math.round(spend(TENANTS.cached) * 0.8)) }],
      credit: false,
      cacheHitPriceMicros: HIT_PRICE_MICROS,
    },
  ];
  return { tenants, requests, topUps, openingCreditMicros: Math.max(200, Math.round(prepaidSpend * 0.3)) };
}
