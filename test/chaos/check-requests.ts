/**
 * The invariants about requests and their usage records: at most one record per request and exactly
 * one, as told, per answer (3); an Idempotency-Key charged at most once, with one completion (4); every
 * background response ended, recorded at most once (5); only the spec's statuses, and no error answer
 * charged (6). Records are found by the request id an answer named, and by the tag every attempt sends
 * as X-Feature (docs/chaos.md, "Finding a request's record").
 */
import type { Attempt, ToldUsage } from './client.ts';
import { describeAttempt, type Evidence, type InvariantResult, type Offender } from './evidence.ts';
import type { StoredRecord } from './read-state.ts';
import type { RequestLog, TopUpLog } from './traffic.ts';
import { PRICES } from './traffic-plan.ts';

/** The spec's statuses of a model request: success and its error envelopes. */
export const SPEC_STATUSES = new Set([200, 400, 401, 402, 403, 404, 409, 422, 429, 502, 503, 504]);
const MAX_LISTED = 25;

/** Records by tag and by request id, and the tags each request's attempts carried. */
export class RecordIndex {
  readonly byTag = new Map<string, StoredRecord[]>();
  readonly byId = new Map<string, StoredRecord>();

  constructor(records: StoredRecord[]) {
    for (const record of records) {
      this.byId.set(record.requestId, record);
      const list = this.byTag.get(record.feature ?? '') ?? [];
      list.push(record);
      this.byTag.set(record.feature ?? '', list);
    }
  }

  /** Every record of a request, whichever attempt made it. */
  ofRequest(log: RequestLog): StoredRecord[] {
    return log.attempts.flatMap((a) => this.byTag.get(a.tag) ?? []);
  }

  /** Records of one attempt: by the request id it was answered with, and by its tag. */
  ofAttempt(attempt: Attempt): StoredRecord[] {
    const found = new Set(this.byTag.get(attempt.tag) ?? []);
    const byId = attempt.requestId ? this.byId.get(attempt.requestId) : undefined;
    if (byId) found.add(byId);
    return [...found];
  }
}

/** Whether a record charged its request. */
function charged(record: StoredRecord): boolean {
  return record.status === 'succeeded' || record.costMicros > 0;
}

/** What an answer's usage costs: the catalog's prices of the alias that answered, or the plan's hit price. */
export function expectedCost(usage: ToldUsage | null, model: string | null, cacheHit: boolean, hitPrice: number): number | null {
  if (cacheHit) return hitPrice;
  const price = model ? PRICES[model] : undefined;
  if (!usage || !price) return null;
  return usage.prompt * price.input + usage.completion * price.output;
}

/** The usage a request's client was told last (a resumed stream's usage chunk may come in any attempt). */
function toldUsage(log: RequestLog): { usage: ToldUsage | null; model: string | null } {
  const told = [...log.attempts].reverse().find((a) => a.usage !== null);
  return { usage: told?.usage ?? null, model: told?.model ?? log.attempts.find((a) => a.model)?.model ?? null };
}

/** An attempt that got a whole answer: a JSON completion, or a stream that reached [DONE]. */
function answered(attempt: Attempt): boolean {
  return attempt.status === 200 && (attempt.stream ? attempt.done : attempt.completionId !== null);
}

function cap(offenders: Offender[]): Offender[] {
  return offenders.slice(0, MAX_LISTED);
}

/** 3: at most one record per request; exactly one, succeeded and costing what was told, per answer. */
export function checkRecords(logs: RequestLog[], index: RecordIndex, records: StoredRecord[], evidence: Evidence, hitPrice: number): InvariantResult {
  const offenders: Offender[] = [];
  const tags = new Map(logs.flatMap((log) => log.attempts.map((a) => [a.tag, log] as const)));
  for (const [tag, list] of index.byTag) {
    const log = tags.get(tag);
    if (!log) offenders.push({ what: `record(s) of a tag no request sent (${tag || 'no X-Feature'})`, records: list.map((r) => `${r.requestId} ${r.status}`) });
    else if (list.length > 1)
      offenders.push(evidence.attemptOffender(`${list.length} records for one attempt`, log, log.attempts.find((a) => a.tag === tag) ?? null, list));
  }
  let answers = 0;
  let hits = 0;
  let found = 0;
  const lost: string[] = [];
  for (const log of logs.filter((l) => l.plan.kind !== 'background')) {
    for (const attempt of log.attempts.filter(answered)) {
      answers++;
      if (attempt.xCache === 'hit') hits++;
      const mine = attempt.replayed ? index.ofRequest(log).filter((r) => r.status === 'succeeded') : index.ofAttempt(attempt);
      const record = attempt.replayed ? mine[0] : attempt.requestId ? index.byId.get(attempt.requestId) : undefined;
      if (!record) {
        const loss = evidence.lossCovering(attempt.endedAt);
        if (loss)
          lost.push(
            `${attempt.requestId} (answered ${(attempt.endedAt - (loss.lossAt as number)) / 1000}s from the loss at ${(loss.lossAt as number) / 1000}s)`,
          );
        else offenders.push(evidence.attemptOffender('answered, but no usage record', log, attempt, index.ofRequest(log)));
        continue;
      }
      found++;
      const told = attempt.replayed || log.plan.kind === 'key-resume' ? toldUsage(log) : { usage: attempt.usage, model: attempt.model };
      const cost = expectedCost(told.usage, told.model, attempt.xCache === 'hit', hitPrice);
      if (record.status !== 'succeeded') offenders.push(evidence.attemptOffender(`answered, but its record is ${record.status}`, log, attempt, [record]));
      else if (cost === null) offenders.push(evidence.attemptOffender('answered without usage the client could price', log, attempt, [record]));
      else if (record.costMicros !== cost)
        offenders.push(evidence.attemptOffender(`record costs ${record.costMicros}, the answer's usage ${cost}`, log, attempt, [record]));
    }
  }
  // A stream cut short records what was produced (prompts-usage-audit.md), and streamed spend is never recorded as zero (wire-behaviour.md).
  let streamedText = 0;
  for (const log of logs) {
    for (const attempt of log.attempts.filter((a) => a.textChunks > 0 && !a.replayed && a.requestId)) {
      streamedText++;
      const record = index.byId.get(attempt.requestId as string);
      if (record && record.completionTokens === 0)
        offenders.push(
          evidence.attemptOffender(`text reached the client (${attempt.textChunks} chunks) but its record counts no completion tokens`, log, attempt, [record]),
        );
    }
  }
  const duplicates = [...index.byTag.values()].filter((list) => list.length > 1).length;
  return {
    id: 3,
    name: 'One usage record per request; one, as told, per answer',
    held: offenders.length === 0,
    figures:
      `${records.length} records for ${tags.size} attempts; ${duplicates} attempts with >1 record; ` +
      `${answers} answers (200 JSON or [DONE], ${hits} of them cache hits): ${found} found, ${lost.length} missing within 1 s of an emptied Redis` +
      `${lost.length > 0 ? ` [${lost.slice(0, 5).join('; ')}]` : ''}; ${streamedText} streams delivered text; ${offenders.length} offending`,
    offenders: cap(offenders),
  };
}

/** 4: an Idempotency-Key charged at most once and answered with one completion. */
export function checkIdempotency(logs: RequestLog[], index: RecordIndex, evidence: Evidence): InvariantResult {
  const offenders: Offender[] = [];
  const keyed = logs.filter((l) => l.plan.key !== null);
  let sends = 0;
  let replays = 0;
  let resumes = 0;
  for (const log of keyed) {
    sends += log.attempts.length;
    replays += log.attempts.filter((a) => a.replayed).length;
    resumes += log.attempts.filter((a) => a.resumedFrom !== null).length;
    const records = index.ofRequest(log);
    const charges = records.filter(charged);
    const completions = new Set(log.attempts.filter((a) => a.status === 200 && a.completionId).map((a) => a.completionId));
    const makers = new Set(log.attempts.filter((a) => a.status === 200 && a.bodyRequestId).map((a) => a.bodyRequestId));
    const reasons = [
      ...(charges.length > 1 ? [`charged ${charges.length} times`] : []),
      ...(completions.size > 1 || makers.size > 1 ? [`answered with ${Math.max(completions.size, makers.size)} different completions`] : []),
    ];
    if (reasons.length > 0)
      offenders.push({
        ...evidence.attemptOffender(`key ${reasons.join(' and ')}`, log, log.attempts.at(-1) ?? null, records),
        got: log.attempts.map(describeAttempt).join(' | '),
      });
  }
  return {
    id: 4,
    name: 'An Idempotency-Key charged at most once, with one completion',
    held: offenders.length === 0,
    figures: `${keyed.length} keys, ${sends} sends (${replays} answered replayed, ${resumes} resumed with Last-Event-ID); ${offenders.length} keys offending`,
    offenders: cap(offenders),
  };
}

/** 5: every background response ended, with at most one record (one succeeded, as told, when completed). */
export function checkBackground(logs: RequestLog[], records: StoredRecord[], evidence: Evidence): InvariantResult {
  const offenders: Offender[] = [];
  const accepted = logs.filter((l) => l.background?.id);
  const ends: Record<string, number> = {};
  let lost = 0;
  for (const log of accepted) {
    const state = log.background as NonNullable<RequestLog['background']>;
    const mine = records.filter((r) => r.responseId === state.id);
    const ended = state.endedSeenAt !== null;
    ends[ended ? (state.status as string) : `unfinished (${state.status ?? 'never read'})`] =
      (ends[ended ? (state.status as string) : `unfinished (${state.status ?? 'never read'})`] ?? 0) + 1;
    const last = log.attempts.find((a) => a.completionId === state.id) ?? null;
    if (!ended) offenders.push(evidence.attemptOffender(`response ${state.id} still ${state.status ?? 'unread'} when polling gave up`, log, last, mine));
    if (mine.length > 1) offenders.push(evidence.attemptOffender(`response ${state.id} has ${mine.length} records`, log, last, mine));
    if (state.status !== 'completed') continue;
    const succeeded = mine.filter((r) => r.status === 'succeeded');
    const cost = expectedCost(state.usage, state.model, false, 0);
    if (succeeded.length === 0) {
      // Polled every 500 ms: it ended up to about half a second before a poll saw it.
      if (evidence.lossCovering(state.endedSeenAt as number, 1_500, 250)) lost++;
      else offenders.push(evidence.attemptOffender(`response ${state.id} completed without a succeeded record`, log, last, mine));
    } else if (cost !== null && succeeded[0]?.costMicros !== cost) {
      offenders.push(evidence.attemptOffender(`response ${state.id} record costs ${succeeded[0]?.costMicros}, its usage ${cost}`, log, last, mine));
    }
  }
  const refused = logs.filter((l) => l.plan.kind === 'background' && !l.background?.id).length;
  const census = Object.entries(ends)
    .map(([status, count]) => `${count} ${status}`)
    .join(', ');
  return {
    id: 5,
    name: 'Every background response ended, with at most one record',
    held: offenders.length === 0,
    figures: `${accepted.length} accepted (${refused} not accepted): ${census || 'none'}; ${lost} completed ones' records lost with an emptied Redis`,
    offenders: cap(offenders),
  };
}

function census(counts: Map<string, number>): string {
  return [...counts]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([status, count]) => `${status}×${count}`)
    .join(' ');
}

function count(counts: Map<string, number>, label: string): void {
  counts.set(label, (counts.get(label) ?? 0) + 1);
}

/** 6: only the spec's statuses; no error answer charged. */
export function checkStatuses(logs: RequestLog[], topUps: TopUpLog[], index: RecordIndex, evidence: Evidence): InvariantResult {
  const offenders: Offender[] = [];
  const statuses = new Map<string, number>();
  let errors = 0;
  for (const log of logs) {
    for (const attempt of log.attempts) {
      count(statuses, attempt.status === null ? (attempt.dropped ? 'dropped' : 'no-answer') : String(attempt.status));
      if (attempt.status === null || attempt.status < 300) {
        if (attempt.status !== null && !SPEC_STATUSES.has(attempt.status))
          offenders.push(evidence.attemptOffender(`status ${attempt.status}`, log, attempt, []));
        continue;
      }
      errors++;
      const mine = index.ofAttempt(attempt);
      if (!SPEC_STATUSES.has(attempt.status)) offenders.push(evidence.attemptOffender(`status ${attempt.status} is not the spec's`, log, attempt, mine));
      if (mine.some(charged))
        offenders.push(evidence.attemptOffender(`error answer ${attempt.status} ${attempt.errorCode ?? ''} was charged`, log, attempt, mine));
    }
    for (const poll of log.background?.oddPolls ?? [])
      offenders.push({
        what: `poll of ${log.background?.id} answered ${poll.status} ${poll.code ?? ''}`,
        requestId: poll.requestId,
        at: poll.at,
        faults: evidence.faultsNear(poll.at),
      });
    for (const [status, n] of Object.entries(log.background?.pollStatuses ?? {})) statuses.set(`poll:${status}`, (statuses.get(`poll:${status}`) ?? 0) + n);
  }
  for (const topUp of topUps) {
    for (const answer of topUp.answers) {
      count(statuses, `top-up:${answer.status === 0 ? 'no-answer' : answer.status}`);
      if (answer.status !== 0 && answer.status !== 201 && !SPEC_STATUSES.has(answer.status))
        offenders.push({
          what: `top-up ${topUp.plan.id} answered ${answer.status} ${answer.code ?? ''}`,
          at: answer.at,
          faults: evidence.faultsNear(answer.at),
        });
    }
  }
  return {
    id: 6,
    name: "Only the spec's statuses; no error answer charged",
    held: offenders.length === 0,
    figures: `${census(statuses)}; ${errors} error answers, ${offenders.filter((o) => o.what.includes('charged')).length} charged`,
    offenders: cap(offenders),
  };
}
