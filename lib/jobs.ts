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
  /**
   * The local runner's interval, when it should be shorter than the cloud's (EventBridge rules
   * cannot fire more often than every minute; in the cloud a faster trigger takes that role).
   */
  readonly localEverySeconds?: number;
}

export const JOBS: readonly JobDefinition[] = [
  {
    id: 'ReconcileAttempts',
    entry: 'lambdas/handlers/reconcile-job.ts',
    everyMinutes: 1,
    access: { table: 'readWrite', merchantSecrets: true },
    timeoutSeconds: 60,
    description: 'Settles payment attempts and money operations left without an acquirer answer',
    // Locally (where the runner also runs every job once at start, after a crash) every 10 s.
    localEverySeconds: 10,
  },
  {
    id: 'CaptureAuthorizations',
    entry: 'lambdas/handlers/capture-job.ts',
    everyMinutes: 1,
    access: { table: 'readWrite', merchantSecrets: false },
    timeoutSeconds: 60,
    description: 'Captures due authorizations and releases expired ones',
  },
  {
    id: 'DeliverCallbacks',
    entry: 'lambdas/handlers/callback-job.ts',
    everyMinutes: 1,
    access: { table: 'readWrite', merchantSecrets: true },
    timeoutSeconds: 60,
    description: 'Delivers due merchant callbacks from the outbox: retries, and anything the stream missed',
    localEverySeconds: 2,
  },
];
