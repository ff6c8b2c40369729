/**
 * What every invariant reports: its result with figures and, when broken, the offending requests with
 * what they got, the records found for them, and the faults that happened just before.
 */
import type { Attempt } from './client.ts';
import type { FaultEvent } from './faults.ts';
import type { StoredRecord } from './read-state.ts';
import type { RequestLog } from './traffic.ts';

/** One thing that breaks an invariant, with what is needed to debug it. */
export interface Offender {
  what: string;
  tenant?: string;
  kind?: string;
  key?: string | null;
  /** What the client got, e.g. `503 service_unavailable`, `200 [DONE]`, `no answer (ECONNRESET)`. */
  got?: string;
  requestId?: string | null;
  tag?: string;
  /** ms since the campaign started. */
  at?: number;
  records?: string[];
  faults?: string[];
}

/** One invariant's verdict. */
export interface InvariantResult {
  id: number;
  name: string;
  held: boolean;
  figures: string;
  offenders: Offender[];
}

/** Looks faults up by time and describes records and attempts; times are ms since the campaign started. */
export class Evidence {
  readonly faults: FaultEvent[];
  readonly campaignStartedAt: number;

  constructor(faults: FaultEvent[], campaignStartedAt: number) {
    this.faults = faults;
    this.campaignStartedAt = campaignStartedAt;
  }

  /** Faults that were going on within `beforeMs` before `from` and up to `to`. */
  faultsNear(from: number, to = from, beforeMs = 5_000): string[] {
    return this.faults
      .filter((f) => f.startedAt <= to + 500 && f.endedAt >= from - beforeMs)
      .map((f) => `${seconds(f.startedAt)}–${seconds(f.endedAt)} ${f.description}: ${f.detail}`);
  }

  /** The loss (an emptied Redis, a killed master) whose window [loss − beforeMs, loss + afterMs] holds `at`, if any. */
  lossCovering(at: number, beforeMs = 1_000, afterMs = 250): FaultEvent | null {
    return this.faults.find((f) => f.lossAt !== null && at >= f.lossAt - beforeMs && at <= f.lossAt + afterMs) ?? null;
  }

  /** A record's time in the campaign's clock. */
  recordAt(record: StoredRecord): number {
    return record.createdAt - this.campaignStartedAt;
  }

  /** An offender for an attempt of a request. */
  attemptOffender(what: string, log: RequestLog, attempt: Attempt | null, records: StoredRecord[]): Offender {
    return {
      what,
      tenant: log.plan.tenant,
      kind: `${log.plan.kind}${log.plan.stream ? ' stream' : ''}`,
      key: log.plan.key,
      got: attempt ? describeAttempt(attempt) : undefined,
      requestId: attempt?.requestId ?? null,
      tag: attempt?.tag ?? `r${log.plan.n}.*`,
      at: attempt?.startedAt ?? log.attempts[0]?.startedAt,
      records: records.map(describeRecord),
      faults: this.faultsNear(attempt?.startedAt ?? log.attempts[0]?.startedAt ?? 0, attempt?.endedAt ?? log.attempts.at(-1)?.endedAt ?? 0),
    };
  }
}

/** `12.3s` */
export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

/** What an attempt got, in a few words. */
export function describeAttempt(a: Attempt): string {
  const when = `${seconds(a.startedAt)}–${seconds(a.endedAt)} web${a.web}`;
  if (a.status === null) return `${a.dropped ? 'dropped by the client' : `no answer (${a.networkError ?? '?'})`} ${when}`;
  const parts = [String(a.status)];
  if (a.errorCode) parts.push(a.errorCode);
  if (a.stream && a.status === 200) parts.push(a.done ? '[DONE]' : a.dropped ? `dropped after ${a.chunks} chunks` : `no [DONE] after ${a.chunks} chunks`);
  if (a.resumedFrom !== null) parts.push(`resumed after event ${a.resumedFrom}`);
  if (a.replayed) parts.push('replayed');
  if (a.xCache) parts.push(`x-cache ${a.xCache}`);
  if (a.usage) parts.push(`told ${a.usage.prompt}+${a.usage.completion} tokens of ${a.model}`);
  if (a.completionId) parts.push(a.completionId);
  return `${parts.join(' ')} ${when}${a.errorMessage && a.status !== 200 ? ` “${a.errorMessage.slice(0, 120)}”` : ''}`;
}

/** A record in one line. */
export function describeRecord(r: StoredRecord): string {
  const code = r.errorCode ? `/${r.errorCode}` : '';
  const hit = r.cacheHit ? ' cache hit' : '';
  return `${r.requestId} ${r.feature ?? '-'} ${r.status}${code} cost ${r.costMicros} (${r.promptTokens}+${r.completionTokens} tokens of ${r.model}${hit}) latency ${r.latencyMs} ms`;
}
