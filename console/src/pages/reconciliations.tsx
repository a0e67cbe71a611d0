import { useState } from 'preact/hooks';
import { Api } from '../api';
import {
  ErrorMessage,
  Field,
  PageTitle,
  StatusBadge,
  TableBox,
  useAction,
  useLoad,
  when,
} from '../ui';

/** A reconciliation run as GET /api/reconciliations lists it (docs/reconciliation.md). */
export interface ReconciliationRun {
  id: string;
  trigger: 'manual' | 'schedule' | 'gap';
  since: string;
  until: string;
  dry_run: boolean;
  status: string;
  started_at: string | null;
  finished_at: string | null;
  missing: Record<string, number>;
  created: Record<string, number>;
  errors: { source: string; status: number | null; message: string }[];
}

const total = (counts: Record<string, number>) =>
  Object.values(counts).reduce((sum, n) => sum + n, 0);

const HOUR = 3_600_000;
/** A datetime-local value (local time, minutes) as the API's UTC timestamp. */
const utc = (local: string) => new Date(local).toISOString();
const local = (ms: number) => {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
};

/**
 * The operator's page (bridge:admin): the reconciliation runs, newest first and refreshed while
 * one is going, a form that starts one, and a button that cancels one queued or running.
 */
export function ReconciliationsPage({ api }: { api: Api }) {
  const runs = useLoad(
    () => api.get<{ data: ReconciliationRun[] }>('/api/reconciliations', { limit: '20' }),
    [api],
    3000,
  );
  const [since, setSince] = useState(local(Date.now() - 3 * HOUR));
  const [until, setUntil] = useState('');
  const [dryRun, setDryRun] = useState(false);
  const start = useAction();
  const cancel = useAction();
  return (
    <>
      <PageTitle>Reconciliation</PageTitle>
      <p>
        Asks the platform which meetings, participants and recordings a window had, and delivers the
        events this service never received.
      </p>
      <form
        class="inline"
        aria-label="Start a reconciliation"
        onSubmit={(event) => {
          event.preventDefault();
          void start
            .run(() =>
              api.post('/api/reconciliations', {
                since: utc(since),
                ...(until ? { until: utc(until) } : {}),
                dry_run: dryRun,
              }),
            )
            .then((ok) => {
              if (ok) void runs.reload();
            });
        }}
      >
        <Field
          id="rec-since"
          label="Since"
          type="datetime-local"
          required
          value={since}
          onValue={setSince}
        />
        <Field
          id="rec-until"
          label="Until (default now)"
          type="datetime-local"
          value={until}
          onValue={setUntil}
        />
        <label>
          <input
            type="checkbox"
            checked={dryRun}
            onChange={(e) => setDryRun(e.currentTarget.checked)}
          />{' '}
          Dry run (count only)
        </label>
        <button type="submit" disabled={start.busy}>
          Start reconciliation
        </button>
      </form>
      <ErrorMessage error={start.error} />
      <ErrorMessage error={cancel.error} />
      <ErrorMessage error={runs.error} />
      {!runs.data && !runs.error && <p role="status">Loading…</p>}
      {runs.data && (
        <TableBox label="Reconciliation runs">
          <table>
            <caption>Runs, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Status</th>
                <th scope="col">Trigger</th>
                <th scope="col">Window</th>
                <th scope="col">Missing</th>
                <th scope="col">Created</th>
                <th scope="col">Errors</th>
                <th scope="col">Finished</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {runs.data.data.map((run) => (
                <tr key={run.id}>
                  <td>
                    <StatusBadge status={run.status} />
                    {run.dry_run ? ' (dry run)' : ''}
                  </td>
                  <td>{run.trigger}</td>
                  <td>
                    {when(run.since)} – {when(run.until)}
                  </td>
                  <td>{total(run.missing)}</td>
                  <td>{total(run.created)}</td>
                  <td>
                    {run.errors
                      .map((e) => `${e.source}: ${e.status ?? '—'} ${e.message}`)
                      .join('; ') || '—'}
                  </td>
                  <td>{when(run.finished_at)}</td>
                  <td>
                    {(run.status === 'queued' || run.status === 'running') && (
                      <button
                        type="button"
                        disabled={cancel.busy}
                        aria-label={`Cancel the run of ${when(run.since)} – ${when(run.until)}`}
                        onClick={() => {
                          void cancel
                            .run(() => api.delete(`/api/reconciliations/${run.id}`))
                            .then((ok) => {
                              if (ok) void runs.reload();
                            });
                        }}
                      >
                        Cancel
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
    </>
  );
}
