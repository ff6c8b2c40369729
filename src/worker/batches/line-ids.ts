/**
 * The request id of a batch's line: the same on every run of it, so that its events, its usage
 * record and its result are one line's whatever re-runs it (a worker killed, a segment re-queued).
 */
export function lineRequestId(batchId: string, line: number): string {
  return `batch_req_${batchId.slice(batchId.indexOf('_') + 1)}_${line}`;
}
