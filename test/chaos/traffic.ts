/**
 * Runs the traffic plan against the web processes: each planned request at its time, as the flow its
 * kind says (sent once, dropped, sent again with its key, resumed, polled), and the credit top-ups.
 * Everything each attempt got is kept for the invariants.
 */
import { adminCall, sendAttempt, type Attempt, type Send, type ToldUsage } from './client.ts';
import type { CampaignTenants } from './tenants.ts';
import type { PlannedRequest, PlannedTopUp, TrafficPlan } from './traffic-plan.ts';

/** One planned request and what happened to it. */
export interface RequestLog {
  plan: PlannedRequest;
  /** ms it started after its planned time (the client's concurrency cap). */
  lateMs: number;
  attempts: Attempt[];
  /** A background response: its id, how it ended, and when a poll first saw it end. */
  background: {
    id: string | null;
    status: string | null;
    errorCode: string | null;
    usage: ToldUsage | null;
    model: string | null;
    endedSeenAt: number | null;
    polls: number;
    pollStatuses: Record<string, number>;
    /** Polls answered with a status the spec does not list, with their request ids. */
    oddPolls: Array<{ status: number; requestId: string | null; code: string | null; at: number }>;
  } | null;
}

/** One top-up and every answer its id got. */
export interface TopUpLog {
  plan: PlannedTopUp;
  answers: Array<{ status: number; code: string | null; at: number }>;
}

/** What the traffic needs from the campaign. */
export interface TrafficContext {
  origins: string[];
  tenants: CampaignTenants;
  clock: () => number;
  /** When polling of background responses gives up (ms since the campaign started). */
  pollDeadline: () => number;
}

const MAX_IN_FLIGHT = 40;
const MAX_ATTEMPTS = 5;
const RETRY_STATUSES = new Set([429, 502, 503, 504]);
const TERMINAL = new Set(['completed', 'failed', 'cancelled', 'incomplete']);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** Whether a client with an Idempotency-Key sends it again after this attempt. */
function retriable(attempt: Attempt): boolean {
  if (attempt.networkError !== null) return true;
  if (attempt.status !== null && RETRY_STATUSES.has(attempt.status)) return true;
  // A stream cut by the connection, neither finished nor failed: resume it.
  return attempt.status === 200 && attempt.stream && !attempt.done && attempt.errorCode === null && !attempt.dropped;
}

/** The Last-Event-ID a stream's client resumes with: the last event it read, unless an attempt already read [DONE]. */
function lastSeen(log: RequestLog): number | null {
  if (log.attempts.some((a) => a.done)) return null;
  const ids = log.attempts.map((a) => a.lastEventId).filter((id): id is number => id !== null);
  return ids.length > 0 ? Math.max(...ids) : null;
}

/** The web processes and their traffic. */
export class Traffic {
  readonly requests: RequestLog[] = [];
  readonly topUps: TopUpLog[] = [];
  readonly #plan: TrafficPlan;
  readonly #ctx: TrafficContext;
  #inFlight = 0;

  constructor(plan: TrafficPlan, ctx: TrafficContext) {
    this.#plan = plan;
    this.#ctx = ctx;
  }

  /** Runs every planned request and top-up from `startedAt` (Date.now()); resolves when each flow has ended. */
  async run(startedAt: number, stopped: () => boolean): Promise<void> {
    const flows: Array<Promise<void>> = [];
    const topUps = (async () => {
      for (const topUp of this.#plan.topUps) {
        await sleep(startedAt + topUp.at - Date.now());
        if (stopped()) return;
        flows.push(this.#topUp(topUp));
      }
    })();
    for (const plan of this.#plan.requests) {
      await sleep(startedAt + plan.at - Date.now());
      while (this.#inFlight >= MAX_IN_FLIGHT && !stopped()) await sleep(20);
      if (stopped()) break;
      const log: RequestLog = { plan, lateMs: Math.max(0, Date.now() - startedAt - plan.at), attempts: [], background: null };
      this.requests.push(log);
      this.#inFlight++;
      flows.push(this.#flow(log).finally(() => this.#inFlight--));
    }
    await topUps;
    await Promise.all(flows);
  }

  /** Flows still running. */
  get inFlight(): number {
    return this.#inFlight;
  }

  async #flow(log: RequestLog): Promise<void> {
    const { plan } = log;
    switch (plan.kind) {
      case 'plain':
      case 'cached':
        await this.#send(log, {});
        return;
      case 'stream-abort':
        await this.#send(log, { dropAfterChunks: plan.dropAfterChunks });
        return;
      case 'key-replay':
        await this.#untilAnswered(log);
        await sleep(plan.againAfterMs);
        await this.#untilAnswered(log, true);
        return;
      case 'key-drop':
      case 'key-resume':
        await this.#send(log, plan.stream ? { dropAfterChunks: plan.dropAfterChunks } : { dropAfterMs: plan.dropAfterMs });
        await sleep(plan.againAfterMs);
        await this.#untilAnswered(log, true);
        return;
      case 'background':
        return this.#background(log);
    }
  }

  /** Sends (again, with the key) until an attempt is not worth sending again; `fresh`: always send at least once more. */
  async #untilAnswered(log: RequestLog, fresh = false): Promise<void> {
    let last = fresh ? undefined : log.attempts.at(-1);
    for (let tries = 0; log.attempts.length < MAX_ATTEMPTS + 1 && (last === undefined || retriable(last)); tries++) {
      if (tries > 0) await sleep(Math.min(2_000, 300 * 2 ** (tries - 1)));
      last = await this.#send(log, { lastEventId: log.plan.stream ? lastSeen(log) : null });
    }
  }

  #body(plan: PlannedRequest): unknown {
    if (plan.kind === 'background') return { model: plan.model, input: plan.prompt, background: true, max_output_tokens: plan.maxTokens };
    return {
      model: plan.model,
      messages: [{ role: 'user', content: plan.prompt }],
      max_tokens: plan.maxTokens,
      ...(plan.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
      // A sampled answer is cached only when asked; the cached tenant's prompts are not sampled.
      ...(plan.kind === 'cached' ? { temperature: 0 } : {}),
    };
  }

  async #send(log: RequestLog, extra: Partial<Send>): Promise<Attempt> {
    const { plan } = log;
    const n = log.attempts.length + 1;
    const web = (plan.web + n - 1) % this.#ctx.origins.length;
    const keys = this.#ctx.tenants.byId.get(plan.tenant);
    if (!keys) throw new Error(`no keys for tenant ${plan.tenant}`);
    const attempt = await sendAttempt(
      {
        origin: this.#ctx.origins[web] as string,
        web,
        n,
        tag: `r${plan.n}.${n}`,
        method: 'POST',
        path: plan.kind === 'background' ? '/v1/responses' : '/v1/chat/completions',
        secret: keys.apps[plan.n % keys.apps.length] as string,
        body: this.#body(plan),
        stream: plan.stream,
        key: plan.key,
        ...extra,
      },
      this.#ctx.clock,
    );
    log.attempts.push(attempt);
    return attempt;
  }

  async #background(log: RequestLog): Promise<void> {
    const { plan } = log;
    let last = await this.#send(log, {});
    for (let tries = 1; plan.key !== null && retriable(last) && tries < MAX_ATTEMPTS; tries++) {
      await sleep(Math.min(2_000, 300 * 2 ** (tries - 1)));
      last = await this.#send(log, {});
    }
    const id = log.attempts.find((a) => a.status === 200 && a.completionId)?.completionId ?? null;
    const state: NonNullable<RequestLog['background']> = {
      id,
      status: null,
      errorCode: null,
      usage: null,
      model: null,
      endedSeenAt: null,
      polls: 0,
      pollStatuses: {},
      oddPolls: [],
    };
    log.background = state;
    if (id === null) return;
    const secret = this.#ctx.tenants.byId.get(plan.tenant)?.apps[0] as string;
    while (this.#ctx.clock() < this.#ctx.pollDeadline()) {
      await sleep(500);
      const origin = this.#ctx.origins[state.polls % this.#ctx.origins.length] as string;
      state.polls++;
      const poll = await sendAttempt(
        { origin, web: 0, n: 0, tag: `poll`, method: 'GET', path: `/v1/responses/${id}`, secret, timeoutMs: 10_000 },
        this.#ctx.clock,
      );
      const label = poll.status === null ? 'no answer' : String(poll.status);
      state.pollStatuses[label] = (state.pollStatuses[label] ?? 0) + 1;
      if (poll.status !== null && poll.status !== 200 && poll.status !== 503 && poll.status !== 404)
        state.oddPolls.push({ status: poll.status, requestId: poll.requestId, code: poll.errorCode, at: poll.startedAt });
      if (poll.status !== 200 || poll.responseStatus === null) continue;
      state.status = poll.responseStatus;
      if (!TERMINAL.has(poll.responseStatus)) continue;
      state.usage = poll.usage;
      state.model = poll.model;
      state.errorCode = poll.errorCode;
      state.endedSeenAt = poll.endedAt;
      return;
    }
  }

  async #topUp(topUp: PlannedTopUp): Promise<void> {
    const log: TopUpLog = { plan: topUp, answers: [] };
    this.topUps.push(log);
    const tenant = [...this.#ctx.tenants.byId.values()].find((t) => t.id.endsWith('prepaid'));
    if (!tenant) return;
    const once = async (attemptsLeft: number): Promise<void> => {
      const origin = this.#ctx.origins[log.answers.length % this.#ctx.origins.length] as string;
      const body = { amount_micros: topUp.amountMicros, id: topUp.id };
      const answer = await adminCall(origin, this.#ctx.tenants.operator.admin, 'POST', `/internal/v1/tenants/${tenant.id}/credits`, body);
      log.answers.push({ status: answer.status, code: answer.body?.error?.code ?? null, at: this.#ctx.clock() });
      if ((answer.status === 0 || answer.status >= 500) && attemptsLeft > 1) {
        await sleep(500);
        await once(attemptsLeft - 1);
      }
    };
    await (topUp.twiceAtOnce ? Promise.all([once(MAX_ATTEMPTS), once(MAX_ATTEMPTS)]) : once(MAX_ATTEMPTS));
    if (topUp.againAfterMs !== null) {
      await sleep(topUp.againAfterMs);
      await once(MAX_ATTEMPTS);
    }
  }
}
