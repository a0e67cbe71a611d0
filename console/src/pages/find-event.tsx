import { useState } from 'preact/hooks';
import { Api, ApiProblem, seg } from '../api';
import { looksLikeEventId } from '../logic';
import { href } from '../routes';
import type { EventRecord, Page } from '../types';
import { ErrorMessage, Field, PageTitle, StatusBadge, TableBox, useLoad, when } from '../ui';

const UNAVAILABLE = 'Event lookup is unavailable: this service does not offer GET /api/events yet.';

/** By event id when the text is one (a UUID), else by the platform's tracking id. */
async function find(api: Api, query: string): Promise<EventRecord[]> {
  const text = query.trim();
  try {
    if (looksLikeEventId(text)) {
      try {
        return [await api.get<EventRecord>(`/api/events/${seg(text)}`)];
      } catch (error) {
        if (!(error instanceof ApiProblem) || error.status !== 404 || error.noRoute) throw error;
      }
    }
    const page = await api.get<Page<EventRecord>>('/api/events', { tracking_id: text });
    // The list may leave the deliveries out: each found event is read whole.
    return await Promise.all(
      page.data.map((e) => (e.deliveries ? e : api.get<EventRecord>(`/api/events/${seg(e.id)}`))),
    );
  } catch (error) {
    if (error instanceof ApiProblem && error.noRoute) throw new ApiProblem(404, UNAVAILABLE);
    throw error;
  }
}

export function FindEventPage({ api, query }: { api: Api; query?: string }) {
  const [text, setText] = useState(query ?? '');
  const result = useLoad(() => (query ? find(api, query) : Promise.resolve(null)), [api, query]);
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
                        {d.id.slice(0, 8)}
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
