/**
 * How long a start waits for PostgreSQL: a database briefly away (a restart beside the
 * service's) is waited for; longer, the process exits and the orchestrator restarts it. Once
 * running, /health/ready reports an outage instead. Apart from database.module.ts so the
 * start can say it before the application loads.
 */
export const START_RETRY_ATTEMPTS = 5;
export const START_RETRY_DELAY_MS = 2000;
