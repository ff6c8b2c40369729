/** The console's pages, their routes, and the permission (from GET /internal/v1/me) that shows each. */
import type { FunctionComponent } from 'preact';
import type { Session } from './session.ts';
import { UsagePage } from './pages/usage.tsx';
import { BudgetsPage } from './pages/budgets.tsx';
import { KeysPage } from './pages/keys.tsx';
import { PromptsPage } from './pages/prompts.tsx';
import { AuditPage } from './pages/audit.tsx';
import { AsyncWorkPage } from './pages/async-work.tsx';
import { TenantsPage } from './pages/tenants.tsx';
import { QueuePage } from './pages/queue.tsx';
import { CatalogPage } from './pages/catalog.tsx';

/** A page in the navigation. */
export interface PageEntry {
  route: string;
  title: string;
  component: FunctionComponent;
  /** Whether the principal sees it; the API still refuses whatever the role may not do. */
  shown(session: Session): boolean;
}

/** Every page, in the navigation's order. */
export const PAGES: PageEntry[] = [
  { route: 'usage', title: 'Usage', component: UsagePage, shown: (s) => s.can('usage.read') },
  { route: 'budgets', title: 'Budgets', component: BudgetsPage, shown: (s) => s.can('budgets.read') },
  { route: 'keys', title: 'Keys', component: KeysPage, shown: (s) => s.can('keys.read') },
  { route: 'prompts', title: 'Prompts', component: PromptsPage, shown: (s) => s.can('prompts.read') },
  { route: 'audit', title: 'Audit', component: AuditPage, shown: (s) => s.can('audit.read') },
  {
    route: 'async',
    title: 'Async work',
    component: AsyncWorkPage,
    shown: (s) => s.can('batches.read') || s.can('webhooks.manage') || s.can('responses.create'),
  },
  { route: 'tenants', title: 'Tenants', component: TenantsPage, shown: (s) => s.can('tenants.read') },
  { route: 'queue', title: 'Queue', component: QueuePage, shown: (s) => s.can('queues.read') },
  { route: 'catalog', title: 'Catalog', component: CatalogPage, shown: (s) => s.can('catalog.read') },
];
