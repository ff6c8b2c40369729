/**
 * One fault campaign: start everything, run the seeded traffic and the seeded faults together, stop
 * injecting some seconds before the end, let the gateway quiesce, read what it did, and judge the
 * invariants. Used by the command line (campaign.ts) and by the `chaos` test lane.
 */
import type { CampaignOptions } from './options.ts';
import { planTraffic, type TrafficPlan } from './traffic-plan.ts';
import { describeFault, planFaults, quietTailSeconds, type PlannedFault } from './schedule.ts';
import { startInfrastructure, SETTINGS, STOP_DEADLINE_MS, type Infrastructure } from './infrastructure.ts';
import { setUpTenants, type CampaignTenants } from './tenants.ts';
import { Traffic } from './traffic.ts';
import { runFaults, type FaultEvent } from './faults.ts';
import { quiesce, type Quiescence } from './quiesce.ts';
import { observe } from './observations.ts';
import { Evidence, seconds, type InvariantResult } from './evidence.ts';
import { readStore } from './read-state.ts';
import { checkBudgets, checkCredit } from './check-money.ts';
import { checkBackground, checkIdempotency, checkRecords, checkStatuses, RecordIndex } from './check-requests.ts';
import { checkAudit, checkOutbox, checkStops } from './check-system.ts';
import { brokenDetails, invariantTable } from './report.ts';

/** What a campaign found. */
export interface CampaignResult {
  options: CampaignOptions;
  held: boolean;
  results: InvariantResult[];
  /** The Markdown table of the invariants. */
  table: string;
  /** The offenders of each broken invariant. */
  details: string;
  schedule: PlannedFault[];
  faults: FaultEvent[];
  quiescence: Quiescence;
  /** Every request and top-up, compactly. */
  traffic: { requests: unknown[]; topUps: unknown[] };
}

/** A campaign that can be interrupted (SIGINT): `abort()` stops it and everything it started. */
export class Campaign {
  readonly options: CampaignOptions;
  readonly #log: (line: string) => void;
  #infrastructure: Infrastructure | null = null;
  #stopped = false;
  readonly #startedAt = Date.now();
  readonly #clock = () => Date.now() - this.#startedAt;

  constructor(options: CampaignOptions, log: (line: string) => void) {
    this.options = options;
    this.#log = log;
  }

  /** Stops traffic and faults and ends everything started; safe to call more than once. */
  async abort(): Promise<void> {
    this.#stopped = true;
    const infrastructure = this.#infrastructure;
    this.#infrastructure = null;
    await infrastructure?.stop();
  }

  /** Runs the campaign to its verdict; everything it started is stopped when it returns or throws. */
  async run(): Promise<CampaignResult> {
    const { seed, seconds: duration, webs, cluster } = this.options;
    const plan = planTraffic(seed, duration, webs);
    const schedule = planFaults(seed, duration, { webs, cluster });
    this.#printPlan(plan, schedule);
    try {
      const infrastructure = await startInfrastructure({ cluster, webs }, this.#clock, this.#log);
      this.#infrastructure = infrastructure;
      if (this.#stopped) throw new Error('interrupted');
      const tenants = await setUpTenants(infrastructure.repository, infrastructure.processes.webOrigins[0] as string, plan);
      return await this.#campaign(infrastructure, tenants, plan, schedule);
    } finally {
      await this.abort();
    }
  }

  #printPlan(plan: TrafficPlan, schedule: PlannedFault[]): void {
    const { seed, seconds: duration, webs, cluster } = this.options;
    const kinds = new Map<string, number>();
    for (const r of plan.requests) kinds.set(`${r.kind}${r.stream ? ' stream' : ''}`, (kinds.get(`${r.kind}${r.stream ? ' stream' : ''}`) ?? 0) + 1);
    this.#log(`chaos campaign: seed ${seed}, ${duration} s, ${webs} web, 2 workers, ${cluster ? 'Redis Cluster' : 'one Redis'}`);
    this.#log(`traffic: ${plan.requests.length} requests (${[...kinds].map(([k, n]) => `${n} ${k}`).join(', ')}), ${plan.topUps.length} top-ups`);
    this.#log(
      `tenants: ${plan.tenants.map((t) => `${t.id} [${[...t.budgets.map((b) => `${b.window} ${b.limitMicros}`), t.credit ? `credit from ${plan.openingCreditMicros}` : '', t.cacheHitPriceMicros !== null ? `cache, hit ${t.cacheHitPriceMicros}` : ''].filter((p) => p).join(', ')}]`).join('; ')}`,
    );
    this.#log(`fault schedule (no fault in the last ${quietTailSeconds(duration)} s):`);
    for (const fault of schedule) this.#log(`  +${seconds(fault.at)}  ${describeFault(fault)}`);
  }

  async #campaign(infra: Infrastructure, tenants: CampaignTenants, plan: TrafficPlan, schedule: PlannedFault[]): Promise<CampaignResult> {
    const { seconds: duration } = this.options;
    const trafficStartedAt = Date.now();
    const trafficClock = () => Date.now() - trafficStartedAt;
    const endOfTraffic = this.#clock() + duration * 1000;
    this.#log(`${seconds(this.#clock())}  traffic starts`);
    const traffic = new Traffic(plan, {
      origins: infra.processes.webOrigins,
      tenants,
      clock: this.#clock,
      pollDeadline: () => endOfTraffic + 45_000,
    });
    const progress = setInterval(
      () => this.#log(`${seconds(this.#clock())}  ${traffic.requests.length} requests started, ${traffic.inFlight} in flight`),
      15_000,
    );
    const flows = traffic.run(trafficStartedAt, () => this.#stopped);
    const faults = await runFaults(
      schedule,
      { ...infra, graceMs: SETTINGS.SHUTDOWN_GRACE_MS },
      { trafficStartedAt, lastMs: (duration - quietTailSeconds(duration)) * 1000, clock: this.#clock, log: this.#log, stopped: () => this.#stopped },
    );
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, duration * 1000 - trafficClock())));
    this.#log(`${seconds(this.#clock())}  traffic ends; quiescing`);
    const quiescence = await quiesce(flows, infra, tenants, this.#clock, this.#log);
    clearInterval(progress);
    const observed = await observe(infra, tenants, plan, this.#startedAt);
    this.#log(`${seconds(this.#clock())}  stopping the gateway's processes (SIGTERM)`);
    await infra.processes.stopAll(STOP_DEADLINE_MS);
    const store = await readStore(infra.database.url);
    const evidence = new Evidence(faults, this.#startedAt);
    const index = new RecordIndex(store.records);
    const ttls = { plainMs: SETTINGS.REQUEST_TIMEOUT_MS + 60_000, backgroundMs: SETTINGS.BACKGROUND_QUEUE_DEADLINE_MS + SETTINGS.REQUEST_TIMEOUT_MS };
    const hitPrice = plan.tenants.find((t) => t.cacheHitPriceMicros !== null)?.cacheHitPriceMicros ?? 0;
    const results = [
      checkBudgets(observed.windows, store, traffic.requests, evidence, ttls, observed.budgetErrors),
      checkCredit(observed.credits, plan.tenants, store, traffic.topUps, traffic.requests, evidence, ttls),
      checkRecords(traffic.requests, index, store.records, evidence, hitPrice),
      checkIdempotency(traffic.requests, index, evidence),
      checkBackground(traffic.requests, store.records, evidence),
      checkStatuses(traffic.requests, traffic.topUps, index, evidence),
      checkAudit(observed.audits),
      checkOutbox(observed.backlog, observed.backlogError),
      checkStops(infra.processes.exits, STOP_DEADLINE_MS, evidence),
    ];
    return {
      options: this.options,
      held: results.every((r) => r.held),
      results,
      table: invariantTable(results),
      details: brokenDetails(results),
      schedule,
      faults,
      quiescence,
      traffic: {
        requests: traffic.requests.map((r) => ({
          n: r.plan.n,
          tenant: r.plan.tenant,
          kind: r.plan.kind,
          stream: r.plan.stream,
          key: r.plan.key,
          late_ms: r.lateMs,
          attempts: r.attempts.map((a) => ({
            tag: a.tag,
            web: a.web,
            at: a.startedAt,
            ms: a.endedAt - a.startedAt,
            status: a.status,
            code: a.errorCode,
            network: a.networkError,
            dropped: a.dropped,
            done: a.done,
            request_id: a.requestId,
            replayed: a.replayed,
            cache: a.xCache,
            completion: a.completionId,
            usage: a.usage,
          })),
          background: r.background,
        })),
        topUps: traffic.topUps,
      },
    };
  }
}
