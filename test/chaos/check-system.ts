/**
 * The invariants about the system itself: the audit chain of every tenant verifies (7), the outbox
 * drained (8), and every process stopped when told, within its deadline, and never untold (9).
 */
import type { Evidence, InvariantResult, Offender } from './evidence.ts';
import type { Backlog } from './read-state.ts';
import type { ProcessExit } from './processes.ts';

/** 7: GET /internal/v1/audit/verify of each tenant, as its admin. */
export function checkAudit(verifications: Array<{ tenant: string; status: number; body: any }>): InvariantResult {
  const offenders: Offender[] = verifications
    .filter((v) => v.status !== 200 || v.body?.ok !== true)
    .map((v) => ({ what: `${v.tenant}: verify answered ${v.status} ${JSON.stringify(v.body).slice(0, 300)}` }));
  return {
    id: 7,
    name: 'The audit chain of every tenant verifies',
    held: offenders.length === 0,
    figures: verifications.map((v) => `${v.tenant}: ${v.body?.ok === true ? 'ok' : 'BROKEN'}, ${v.body?.events ?? '?'} events`).join('; '),
    offenders,
  };
}

/** 8: nothing left in the outbox (records and leases, every shard). */
export function checkOutbox(backlog: Backlog | null, error: string | null): InvariantResult {
  const left = backlog ? backlog.outboxItems + backlog.outboxLeases : null;
  return {
    id: 8,
    name: 'The outbox drained',
    held: left === 0,
    figures: backlog
      ? `outbox ${backlog.outboxItems} records + ${backlog.outboxLeases} leased; queue ${backlog.queued} waiting, ${backlog.active} active`
      : `unreadable: ${error}`,
    offenders: left === 0 ? [] : [{ what: backlog ? `${left} outbox entries left after quiescence` : `backlog unreadable: ${error}` }],
  };
}

/** 9: every SIGTERM ended its process within SHUTDOWN_GRACE_MS + 5 s; no process ended untold. */
export function checkStops(exits: ProcessExit[], deadlineMs: number, evidence: Evidence): InvariantResult {
  const offenders: Offender[] = [];
  const terms = exits.filter((e) => e.told?.signal === 'SIGTERM');
  const kills = exits.filter((e) => e.told?.signal === 'SIGKILL');
  const untold = exits.filter((e) => e.told === null);
  for (const exit of terms) {
    if ((exit.stopMs ?? Infinity) > deadlineMs)
      offenders.push({
        what: `${exit.name} (pid ${exit.pid}) took ${exit.stopMs} ms to stop after SIGTERM (deadline ${deadlineMs} ms), exit ${exit.code}`,
        at: exit.exitedAt,
      });
  }
  for (const exit of untold) {
    offenders.push({
      what: `${exit.name} (pid ${exit.pid}) exited untold with ${exit.code}`,
      at: exit.exitedAt,
      faults: evidence.faultsNear(exit.exitedAt),
      records: exit.tail ? exit.tail.split('\n') : [],
    });
  }
  const slowest = terms.reduce((max, e) => Math.max(max, e.stopMs ?? 0), 0);
  const codes = terms.map((e) => `${e.name}:${e.code}`).join(' ');
  return {
    id: 9,
    name: 'Processes stop when told, within their deadline, and only then',
    held: offenders.length === 0,
    figures: `${terms.length} SIGTERMs (slowest ${slowest} ms of ${deadlineMs}; exits ${codes || '-'}), ${kills.length} SIGKILLs, ${untold.length} untold exits`,
    offenders,
  };
}
