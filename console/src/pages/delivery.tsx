import { useState } from 'preact/hooks';
import { Api, seg } from '../api';
import { href } from '../routes';
import type { DeliveryDetail } from '../types';
import { ErrorMessage, PageTitle, StatusBadge, TableBox, useAction, useLoad, when } from '../ui';

export function DeliveryPage({
  api,
  webhookId,
  deliveryId,
  writable,
}: {
  api: Api;
  webhookId: string;
  deliveryId: string;
  writable: boolean;
}) {
  const path = `/api/webhooks/${seg(webhookId)}/deliveries/${seg(deliveryId)}`;
  // Polled like the list, so a redelivery's attempts appear as they happen.
  const delivery = useLoad(() => api.get<DeliveryDetail>(path), [api, path], 1000);
  const action = useAction();
  const [message, setMessage] = useState<string | null>(null);
  const d = delivery.data;
  const redeliver = async () => {
    setMessage(null);
    if (await action.run(() => api.post(`${path}/redeliver`))) {
      setMessage('Redelivery queued.');
      await delivery.reload();
    }
  };
  return (
    <>
      <p class="crumbs">
        <a href={href({ page: 'webhook', id: webhookId })}>Back to the webhook</a>
      </p>
      <PageTitle>Delivery</PageTitle>
      <ErrorMessage error={delivery.error} />
      {!d && !delivery.error && <p role="status">Loading…</p>}
      {d && (
        <>
          <dl class="facts">
            <dt>Id</dt>
            <dd>
              <code>{d.id}</code>
            </dd>
            <dt>Event</dt>
            <dd>
              {d.event} (<code>{d.event_id}</code>)
            </dd>
            <dt>Status</dt>
            <dd>
              <StatusBadge status={d.status} />
            </dd>
            <dt>Attempts</dt>
            <dd>{d.attempt_count}</dd>
            <dt>Next attempt</dt>
            <dd>{when(d.next_attempt_at)}</dd>
            <dt>Last error</dt>
            <dd>{d.last_error ?? '—'}</dd>
            <dt>Created</dt>
            <dd>{when(d.created_at)}</dd>
            <dt>Completed</dt>
            <dd>{when(d.completed_at)}</dd>
          </dl>
          {writable && (
            <div class="actions">
              <button type="button" disabled={action.busy} onClick={redeliver}>
                Redeliver
              </button>
            </div>
          )}
          <ErrorMessage error={action.error} />
          {message && <p role="status">{message}</p>}
          <h2>Body</h2>
          <pre class="code" tabIndex={0} aria-label="Body">
            {JSON.stringify(d.payload, null, 2)}
          </pre>
          <TableBox label="Attempts">
            <table>
              <caption>Attempts</caption>
              <thead>
                <tr>
                  <th scope="col">Attempt</th>
                  <th scope="col">Time</th>
                  <th scope="col">Status code</th>
                  <th scope="col">Duration</th>
                  <th scope="col">Error</th>
                  <th scope="col">Response excerpt</th>
                </tr>
              </thead>
              <tbody>
                {d.attempts.length === 0 && (
                  <tr>
                    <td colSpan={6}>No attempt yet.</td>
                  </tr>
                )}
                {d.attempts.map((a) => (
                  <tr key={a.attempt}>
                    <td class="num">{a.attempt}</td>
                    <td>{when(a.started_at)}</td>
                    <td class="num">{a.status_code ?? '—'}</td>
                    <td class="num">{a.duration_ms === null ? '—' : `${a.duration_ms} ms`}</td>
                    <td>{a.error ?? '—'}</td>
                    <td class="excerpt">
                      <code>{a.response_body ?? ''}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableBox>
        </>
      )}
    </>
  );
}
