import { useState } from 'preact/hooks';
import { Api } from '../api';
import { findEvents } from '../find-events';
import { shortId } from '../logic';
import { href } from '../routes';
import { ErrorMessage, Field, PageTitle, StatusBadge, TableBox, useLoad, when } from '../ui';

export function FindEventPage({ api, query }: { api: Api; query?: string }) {
  const [text, setText] = useState(query ?? '');
  const result = useLoad(
    () => (query ? findEvents(api, query) : Promise.resolve(null)),
    [api, query],
  );
  return (
    <>
      <PageTitle>Find event</PageTitle>
      <form
        class="inline"
        role="search"
        onSubmit={(event) => {
          event.preventDefault();
          if (text.trim()) location.hash = href({ page: 'find-event', query: text.trim() });
        }}
      >
        <Field
          id="find-query"
          label="Event id or tracking id"
          required
          autoComplete="off"
          value={text}
          onValue={setText}
        />
        <button type="submit">Find</button>
      </form>
      <ErrorMessage error={result.error} />
      {query && result.loading && <p role="status">Searching…</p>}
      {result.data && result.data.length === 0 && (
        <p role="status">No event of yours has this id or tracking id.</p>
      )}
      {result.data?.map((event) => (
        <section key={event.id} aria-label={`Event ${event.id}`} class="found">
          <h2>{event.event}</h2>
          <dl class="facts">
            <dt>Event id</dt>
            <dd>
              <code>{event.id}</code>
            </dd>
            <dt>Tracking id</dt>
            <dd>{event.source?.tracking_id ?? '—'}</dd>
            <dt>Created</dt>
            <dd>{when(event.created_at)}</dd>
          </dl>
          <details>
            <summary>Data</summary>
            <pre class="code" tabIndex={0}>
              {JSON.stringify(event.data, null, 2)}
            </pre>
          </details>
          <TableBox label={`Deliveries of ${event.id}`}>
            <table>
              <caption>Deliveries of this event</caption>
              <thead>
                <tr>
                  <th scope="col">Delivery</th>
                  <th scope="col">Status</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Last status code</th>
                  <th scope="col">Completed</th>
                </tr>
              </thead>
              <tbody>
                {(event.deliveries ?? []).map((d) => (
                  <tr key={d.id}>
                    <td>
                      <a
                        href={href({ page: 'delivery', webhookId: d.webhook_id, deliveryId: d.id })}
                        aria-label={`Delivery ${d.id}`}
                      >
                        {shortId(d.id)}
                      </a>
                    </td>
                    <td>
                      <StatusBadge status={d.status} />
                    </td>
                    <td class="num">{d.attempt_count}</td>
                    <td class="num">{d.last_status_code ?? '—'}</td>
                    <td>{when(d.completed_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableBox>
        </section>
      ))}
    </>
  );
}
