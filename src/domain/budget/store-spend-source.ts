import type { Repository } from '../../infra/store/repository.ts';
import type { SpendSource } from './budget-ledger.ts';

/** Budget counters are a cache of the durable usage records and top-ups: this is where they are rebuilt from. */
export function storeSpendSource(repository: Repository): SpendSource {
  return {
    spentMicros: (tenantId, feature, since, until, among) => repository.usage.spentMicros(tenantId, feature, since, until, among),
    creditToppedUp: (tenantId) => repository.budgets.creditToppedUp(tenantId),
  };
}
