import type { TableAccess } from './routes';

/**
 * Scheduled jobs. The stack gives each an EventBridge schedule and its own Lambda; the local runner
 * fires the same handlers on the same schedule.
 */
export interface JobDefinition {
  readonly id: string;
  readonly entry: string;
  readonly everyMinutes: number;
  readonly access: { readonly table: TableAccess; readonly merchantSecrets: boolean };
  readonly timeoutSeconds: number;
  readonly description: string;
}

export const JOBS: readonly JobDefinition[] = [
  {
    id: 'ReconcileAttempts',
    entry: 'lambdas/handlers/reconcile-job.ts',
    everyMinutes: 1,
    access: { table: 'readWrite', merchantSecrets: true },
    timeoutSeconds: 60,
    description: 'Settles payment attempts left without an acquirer answer',
  },
  {
    id: 'CaptureAuthorizations',
    entry: 'lambdas/handlers/capture-job.ts',
    everyMinutes: 1,
    access: { table: 'readWrite', merchantSecrets: false },
    timeoutSeconds: 60,
    description: 'Captures due authorizations and releases expired ones',
  },
];
