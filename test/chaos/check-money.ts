/**
 * The invariants about money, read after quiescence: each budget window's spend in Redis equals the
 * cost of its usage records in the store, nothing is reserved, and no limit is passed (1); the credit
 * balance equals the top-ups in the store less the records' cost, and is never negative (2).
 */
import type { Evidence, InvariantResult, Offender } from './evidence.ts';
import type { HeldReservation, StoredRecord, StoreState } from './read-state.ts';
import type { RequestLog, TopUpLog } from './traffic.ts';
import type { TenantPlan } from './traffic-plan.ts';

/** One budget window as Redis holds it after quiescence (`source`: read through GET /v1/budgets, or the counter itself for a window that ended). */
export interface WindowObservation {
  tenant: string;
  policyId: string;
  window: string;
  startMs: number;
  endMs: number;
  limitMicros: number;
  /** Null: the counter is gone (it is rebuilt from the records when next asked). */
  spent: number | null;
  reserved: number | null;
  held: HeldReservation[];
  source: 'api' | 'counter';
}

/** The credit account of a tenant after quiescence. */
export interface CreditObservation {
  tenant: string;
  balance: number;
  reserved: number;
  held: HeldReservation[];
}

/** How long a reservation holds when never settled: REQUEST_TIMEOUT_MS + 60 s, a background one BACKGROUND_QUEUE_DEADLINE_MS + REQUEST_TIMEOUT_MS. */
export interface ReservationTtls {
  plainMs: number;
  backgroundMs: number;
}

/** Faults after which a reservation may stay until it expires (money.md: a crashed process, a job Redis lost). */
const CRASHES = new Set(['kill-web', 'redis-empty', 'cluster-kill-master']);

function inWindow(records: StoredRecord[], tenant: string, startMs: number, endMs: number): StoredRecord[] {
  return records.filter((r) => r.tenantId === tenant && r.createdAt >= startMs && r.createdAt < endMs);
}

/**
 * What a loss of Redis may let through (money.md, "Missing counters are rebuilt": in-flight reservations
 * are forgotten, so a flush can let through at most the requests in flight at that moment): the cost of
 * the records whose request was in flight when Redis lost its data.
 */
function inFlightAtLoss(records: StoredRecord[], evidence: Evidence): number {
  const losses = evidence.faults.filter((f) => f.lossAt !== null).map((f) => evidence.campaignStartedAt + (f.lossAt as number));
  return records
    .filter((r) => losses.some((loss) => r.createdAt <= loss && loss <= r.createdAt + r.latencyMs + 1_000))
    .reduce((sum, r) => sum + r.costMicros, 0);
}

/** Faults that touch what Redis holds. */
const REDIS_FAULTS = new Set(['redis-restart', 'redis-empty', 'cluster-failover', 'cluster-kill-master']);

/**
 * The records most likely to explain a window's spend differing from its records: those whose request
 * ran across a Redis fault, those of requests answered with an error, those costing exactly the
 * difference, and those made within 2 s of the window's edges (admitted in one window, recorded in the next).
 */
function suspects(records: StoredRecord[], diff: number, w: WindowObservation, logs: RequestLog[], evidence: Evidence): string[] {
  const attempts = new Map(logs.flatMap((log) => log.attempts.map((a) => [a.tag, a] as const)));
  const redis = evidence.faults.filter((f) => REDIS_FAULTS.has(f.kind));
  const lines: string[] = [];
  for (const record of records) {
    const at = evidence.recordAt(record);
    const attempt = attempts.get(record.feature ?? '');
    const reasons = [
      ...redis
        .filter((f) => at <= f.endedAt + 3_000 && at + record.latencyMs >= f.startedAt - 3_000)
        .map((f) => `ran across ${f.kind} at ${(f.startedAt / 1000).toFixed(1)}s`),
      ...(attempt?.status && attempt.status >= 400 ? [`its client got ${attempt.status} ${attempt.errorCode ?? ''}`] : []),
      ...(record.costMicros === diff ? ['costs the difference'] : []),
      ...(Math.min(record.createdAt - w.startMs, w.endMs - record.createdAt) < 2_000 ? ['made within 2 s of the window edge'] : []),
    ];
    if (reasons.length > 0)
      lines.push(`${record.requestId} ${record.feature} ${record.status} cost ${record.costMicros} at ${(at / 1000).toFixed(1)}s: ${reasons.join(', ')}`);
  }
  return lines.slice(0, 30);
}

/** Sorts held reservations into those a crash explains (left to expire) and offenders. */
function judgeHeld(held: HeldReservation[], logs: RequestLog[], evidence: Evidence, ttls: ReservationTtls, offenders: Offender[]): number {
  let expiring = 0;
  for (const reservation of held) {
    const log = logs.find((l) => l.attempts.some((a) => a.requestId === reservation.requestId));
    const attempt = log?.attempts.find((a) => a.requestId === reservation.requestId) ?? null;
    const admitted = [ttls.plainMs, ttls.backgroundMs].map((ttl) => (reservation.expiresAt ?? 0) - ttl - evidence.campaignStartedAt);
    const crash = evidence.faults.find((f) => CRASHES.has(f.kind) && admitted.some((at) => f.startedAt >= at - 500 && f.startedAt <= at + 3_000));
    if (!attempt && crash && reservation.expiresAt !== null) {
      expiring++;
      continue;
    }
    const what = `${reservation.micros} micros still reserved by ${reservation.requestId} in ${reservation.counter}, expiring ${reservation.expiresAt === null ? 'never' : new Date(reservation.expiresAt).toISOString()}`;
    if (log) offenders.push(evidence.attemptOffender(what, log, attempt, []));
    else
      offenders.push({
        what: `${what} (no client was answered with this id; admitted ≈ ${admitted.map((a) => `${(a / 1000).toFixed(1)}s`).join(' or ')})`,
        requestId: reservation.requestId,
        faults: evidence.faultsNear(admitted[0] ?? 0, admitted[0] ?? 0, 2_000),
      });
  }
  return expiring;
}

/** 1: each budget window: spent in Redis = Σ cost of its records; nothing reserved; never above its limit. */
export function checkBudgets(
  windows: WindowObservation[],
  store: StoreState,
  logs: RequestLog[],
  evidence: Evidence,
  ttls: ReservationTtls,
  answers: string[],
): InvariantResult {
  const offenders: Offender[] = answers.map((what) => ({ what }));
  const figures: string[] = [];
  let expiring = 0;
  for (const w of windows) {
    const mine = inWindow(store.records, w.tenant, w.startMs, w.endMs);
    const sum = mine.reduce((total, r) => total + r.costMicros, 0);
    const allowance = inFlightAtLoss(mine, evidence);
    const label = `${w.tenant} ${w.window} from ${new Date(w.startMs).toISOString().slice(0, 13)}h`;
    const slack = allowance > 0 ? ` + ${allowance} in flight at a Redis loss` : '';
    figures.push(
      `${label}: spent ${w.spent ?? 'gone (rebuilt when asked)'} vs Σ records ${sum} (${mine.length}), reserved ${w.reserved ?? '-'}, limit ${w.limitMicros}${slack}`,
    );
    if (w.spent !== null && w.spent !== sum) {
      const diff = Math.abs(w.spent - sum);
      offenders.push({
        what: `${label}: spent ${w.spent} ≠ Σ cost of its ${mine.length} records ${sum} (${w.spent > sum ? 'over' : 'short'} by ${diff}); suspects below`,
        records: suspects(mine, diff, w, logs, evidence),
        faults: evidence.faults.filter((f) => REDIS_FAULTS.has(f.kind)).map((f) => `${(f.startedAt / 1000).toFixed(1)}s ${f.description}: ${f.detail}`),
      });
    }
    if (w.spent !== null && w.spent > w.limitMicros + allowance)
      offenders.push({ what: `${label}: spent ${w.spent} above its limit ${w.limitMicros}${slack}` });
    if (sum > w.limitMicros + allowance) offenders.push({ what: `${label}: records cost ${sum}, above its limit ${w.limitMicros}${slack}` });
    expiring += judgeHeld(w.held, logs, evidence, ttls, offenders);
    if ((w.reserved ?? 0) !== w.held.reduce((total, h) => total + h.micros, 0))
      offenders.push({ what: `${label}: reserved ${w.reserved} but its held reservations add up to ${w.held.reduce((t, h) => t + h.micros, 0)}` });
  }
  return {
    id: 1,
    name: 'Budget spent (Redis) = Σ record cost (store); nothing reserved; within limit',
    held: offenders.length === 0,
    figures: `${figures.join('; ')}${expiring > 0 ? `; ${expiring} reservations of crashed requests left to expire` : ''}`,
    offenders,
  };
}

/** 2: credit balance = Σ top-ups stored − Σ record cost; never negative; every top-up answered 201 stored once. */
export function checkCredit(
  credits: CreditObservation[],
  tenants: TenantPlan[],
  store: StoreState,
  topUps: TopUpLog[],
  logs: RequestLog[],
  evidence: Evidence,
  ttls: ReservationTtls,
): InvariantResult {
  const offenders: Offender[] = [];
  const figures: string[] = [];
  for (const tenant of tenants.filter((t) => t.credit)) {
    const credit = credits.find((c) => c.tenant === tenant.id);
    if (!credit) {
      offenders.push({ what: `${tenant.id}: no credit account could be read` });
      continue;
    }
    const stored = store.topUps.filter((t) => t.tenantId === tenant.id);
    const toppedUp = stored.reduce((sum, t) => sum + t.amountMicros, 0);
    const records = store.records.filter((r) => r.tenantId === tenant.id);
    const spent = records.reduce((sum, r) => sum + r.costMicros, 0);
    const allowance = inFlightAtLoss(records, evidence);
    const answered = new Set(topUps.flatMap((t) => (t.answers.some((a) => a.status === 201) ? [t.plan.id] : [])));
    const twice = topUps.filter((t) => t.plan.twiceAtOnce).length;
    const sent = topUps.reduce((sum, t) => sum + t.answers.length, 0);
    figures.push(
      `${tenant.id}: balance ${credit.balance} vs top-ups ${toppedUp} (${stored.length} stored; ${topUps.length} ids sent ${sent} times, ${twice} twice at once, ${answered.size} answered 201) − records ${spent} (${records.length}) = ${toppedUp - spent}, reserved ${credit.reserved}`,
    );
    if (credit.balance !== toppedUp - spent)
      offenders.push({
        what: `${tenant.id}: balance ${credit.balance} ≠ top-ups ${toppedUp} − records ${spent} = ${toppedUp - spent} (off by ${credit.balance - (toppedUp - spent)})`,
      });
    if (credit.balance < -allowance || toppedUp - spent < -allowance)
      offenders.push({
        what: `${tenant.id}: negative credit (balance ${credit.balance}, top-ups − records ${toppedUp - spent}; in flight at a Redis loss ${allowance})`,
      });
    for (const id of answered) if (!stored.some((t) => t.id === id)) offenders.push({ what: `${tenant.id}: top-up ${id} answered 201 but is not stored` });
    judgeHeld(credit.held, logs, evidence, ttls, offenders);
    const heldMicros = credit.held.reduce((total, h) => total + h.micros, 0);
    if (credit.reserved !== heldMicros) offenders.push({ what: `${tenant.id}: reserved ${credit.reserved} but its held reservations add up to ${heldMicros}` });
  }
  return {
    id: 2,
    name: 'Credit balance = Σ top-ups − Σ record cost; never negative',
    held: offenders.length === 0,
    figures: figures.join('; ') || 'no credit account',
    offenders,
  };
}
