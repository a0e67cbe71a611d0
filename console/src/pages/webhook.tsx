import { useEffect, useRef, useState } from 'preact/hooks';
import { Api, seg } from '../api';
import { generateSecret, localToUtc, parseEvents, shortId, utcToLocal } from '../logic';
import { href } from '../routes';
import type { Delivery, EventType, Page, Webhook } from '../types';
import {
  ErrorMessage,
  Field,
  PageTitle,
  StatusBadge,
  TableBox,
  isProblem,
  useAction,
  useLoad,
  when,
} from '../ui';
import { stateOf } from './webhooks';
import { TemplatePreview, previewEvent, previewType } from './template-preview';

/** The delivery table's refresh: a new attempt shows within 2 s (docs/console.md) without a reload. */
const POLL_MS = 1000;

export function WebhookPage({ api, id, writable }: { api: Api; id: string; writable: boolean }) {
  const path = `/api/webhooks/${seg(id)}`;
  const webhook = useLoad(() => api.get<Webhook>(path), [api, id]);
  const w = webhook.data;
  return (
    <>
      <PageTitle>Webhook</PageTitle>
      <ErrorMessage error={webhook.error} />
      {!w && !webhook.error && <p role="status">Loading…</p>}
      {w && (
        <>
          <p class="url-line">
            <strong>{w.url}</strong> · {stateOf(w)}
            {w.disabled_at ? ` since ${when(w.disabled_at)}` : ''}
          </p>
          <Settings api={api} webhook={w} writable={writable} onChanged={() => webhook.reload()} />
          <Deliveries api={api} webhook={w} />
        </>
      )}
    </>
  );
}

function Settings({
  api,
  webhook,
  writable,
  onChanged,
}: {
  api: Api;
  webhook: Webhook;
  writable: boolean;
  onChanged: () => Promise<void>;
}) {
  const path = `/api/webhooks/${seg(webhook.id)}`;
  // A broker destination has no url; a chat one's is shown masked and is sent only when changed.
  const [url, setUrl] = useState(webhook.url ?? '');
  const [events, setEvents] = useState(webhook.events.join(', '));
  const [template, setTemplate] = useState(webhook.template ?? '');
  const catalog = useLoad(() => api.get<{ data: EventType[] }>('/api/event-types'), [api]);
  const [message, setMessage] = useState<string | null>(null);
  const [newSecret, setNewSecret] = useState<string | null>(null);
  const action = useAction();

  const act = async (done: string, call: () => Promise<unknown>) => {
    setMessage(null);
    setNewSecret(null);
    if (await action.run(call)) {
      setMessage(done);
      await onChanged();
    }
  };
  const save = (event: Event) => {
    event.preventDefault();
    // Only what changed: PATCHing a chat webhook's masked url back would replace its address.
    const given = template.trim() === '' ? null : template;
    const changes = {
      ...(url.trim() !== (webhook.url ?? '') && { url: url.trim() }),
      events: parseEvents(events),
      ...(given !== (webhook.template ?? null) && { template: given }),
    };
    void act('Saved.', () => api.patch(path, changes));
  };
  const clearTemplate = () => {
    setTemplate('');
    void act('Template removed.', () => api.patch(path, { template: null }));
  };
  const rotate = () =>
    act('', async () => {
      const secret = generateSecret((b) => crypto.getRandomValues(b));
      const updated = await api.patch<Webhook>(path, { secret });
      setNewSecret(secret);
      return updated;
    });

  return (
    <section aria-labelledby="settings-title">
      <h2 id="settings-title">Settings</h2>
      <form class="stack" onSubmit={save}>
        <Field
          id="settings-url"
          label="URL"
          inputMode="url"
          value={url}
          readOnly={!writable}
          onValue={setUrl}
        />
        <Field
          id="settings-events"
          label="Events"
          value={events}
          readOnly={!writable}
          onValue={setEvents}
        />
        <label for="settings-template">Template</label>
        <textarea
          id="settings-template"
          rows={6}
          spellcheck={false}
          aria-describedby="settings-template-hint"
          value={template}
          readOnly={!writable}
          onInput={(e) => setTemplate(e.currentTarget.value)}
          placeholder='{"text": "Meeting started: " & data.topic}'
        />
        <p class="hint" id="settings-template-hint">
          A JSONata expression over the notification body; its output is sent instead. Empty (then
          Save), or Remove template: the body (http) or the tool's built-in message.
        </p>
        <TemplatePreview
          api={api}
          template={template}
          type={previewType(webhook.destination?.type)}
          event={previewEvent(events, catalog.data?.data)}
        />
        <p class="hint">
          Secret ends in …{webhook.secret_hint}
          {webhook.previous_secret_expires_at
            ? `; the previous one still signs until ${when(webhook.previous_secret_expires_at)}`
            : ''}
        </p>
        {writable && (
          <div class="actions">
            <button type="submit" disabled={action.busy}>
              Save
            </button>
            {webhook.template && (
              <button
                type="button"
                class="secondary"
                disabled={action.busy}
                onClick={clearTemplate}
              >
                Remove template
              </button>
            )}
          </div>
        )}
      </form>
      {writable && (
        <div class="actions">
          <button
            type="button"
            disabled={action.busy}
            onClick={() => void act('Test queued.', () => api.post(`${path}/test`))}
          >
            Send test
          </button>
          <button type="button" class="secondary" disabled={action.busy} onClick={rotate}>
            Rotate secret
          </button>
          <button
            type="button"
            class="secondary"
            disabled={action.busy}
            onClick={() =>
              void act(webhook.active ? 'Disabled.' : 'Enabled.', () =>
                api.patch(path, { active: !webhook.active }),
              )
            }
          >
            {webhook.active ? 'Disable' : 'Enable'}
          </button>
          <ReplayDialog api={api} webhook={webhook} />
        </div>
      )}
      <ErrorMessage error={action.error} />
      {message && <p role="status">{message}</p>}
      {newSecret && (
        <div role="status" class="secret-box">
          <p>New secret (shown once; the previous one keeps signing during its grace period):</p>
          <code aria-label="New secret">{newSecret}</code>
        </div>
      )}
    </section>
  );
}

function ReplayDialog({ api, webhook }: { api: Api; webhook: Webhook }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [since, setSince] = useState(() => utcToLocal(Date.now() - 3_600_000));
  const [until, setUntil] = useState('');
  const [status, setStatus] = useState<'failed' | 'succeeded'>('failed');
  const [missed, setMissed] = useState(false);
  const [count, setCount] = useState<number | null>(null);
  const action = useAction();

  const submit = async (event: Event) => {
    event.preventDefault();
    setCount(null);
    await action.run(async () => {
      const body: Record<string, unknown> = { since: localToUtc(since), status, missed };
      const end = localToUtc(until);
      if (end) body.until = end;
      const answer = await api.post<{ count: number }>(
        `/api/webhooks/${seg(webhook.id)}/replay`,
        body,
      );
      setCount(answer.count);
    });
  };
  return (
    <>
      <button
        type="button"
        class="secondary"
        onClick={() => {
          setCount(null);
          action.setError(null);
          dialog.current?.showModal();
        }}
      >
        Replay
      </button>
      <dialog ref={dialog} aria-labelledby="replay-title">
        <form class="stack" onSubmit={submit}>
          <h2 id="replay-title">Replay deliveries</h2>
          <Field
            id="replay-since"
            label="Since"
            type="datetime-local"
            required
            value={since}
            onValue={setSince}
          />
          <Field
            id="replay-until"
            label="Until"
            type="datetime-local"
            value={until}
            onValue={setUntil}
          />
          <label for="replay-status">Status</label>
          <select
            id="replay-status"
            value={status}
            onChange={(e) => setStatus(e.currentTarget.value as 'failed' | 'succeeded')}
          >
            <option value="failed">failed</option>
            <option value="succeeded">succeeded</option>
          </select>
          <label class="check">
            <input
              type="checkbox"
              checked={missed}
              onChange={(e) => setMissed(e.currentTarget.checked)}
            />
            Missed
          </label>
          <p class="hint">
            Also deliver the events of its kinds it never received while inactive or disabled.
          </p>
          <ErrorMessage error={action.error} />
          {count !== null && (
            <p role="status">
              Queued {count} {count === 1 ? 'delivery' : 'deliveries'}.
            </p>
          )}
          <div class="actions">
            <button type="submit" disabled={action.busy}>
              Replay
            </button>
            <button type="button" class="secondary" onClick={() => dialog.current?.close()}>
              Close
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}

const STATUSES = ['pending', 'succeeded', 'failed'];

function Deliveries({ api, webhook }: { api: Api; webhook: Webhook }) {
  const [status, setStatus] = useState('');
  const [event, setEvent] = useState('');
  const catalog = useLoad(() => api.get<{ data: EventType[] }>('/api/event-types'), [api]);
  const list = useLoad(
    () =>
      api.get<Page<Delivery>>(`/api/webhooks/${seg(webhook.id)}/deliveries`, {
        status: status || undefined,
        event: event || undefined,
        limit: '50',
      }),
    [api, webhook.id, status, event],
    POLL_MS,
  );
  const events = [
    ...new Set(
      ['webhook.test', ...webhook.events, ...(catalog.data?.data.map((t) => t.name) ?? [])].filter(
        (name) => !name.endsWith('*'),
      ),
    ),
  ];
  // A failing poll (the service restarting) keeps the rows; a 4xx of the filters shows.
  const [shownError, setShownError] = useState<unknown>(null);
  useEffect(() => setShownError(isProblem(list.error) ? list.error : null), [list.error]);
  return (
    <section aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Deliveries</h2>
      <div class="filters">
        <label>
          <span id="filter-status">Status</span>
          <select
            aria-labelledby="filter-status"
            value={status}
            onChange={(e) => setStatus(e.currentTarget.value)}
          >
            <option value="">all</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span id="filter-event">Event</span>
          <select
            aria-labelledby="filter-event"
            value={event}
            onChange={(e) => setEvent(e.currentTarget.value)}
          >
            <option value="">all</option>
            {events.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorMessage error={shownError} />
      <TableBox label="Deliveries">
        <table>
          <caption>Deliveries</caption>
          <thead>
            <tr>
              <th scope="col">Delivery</th>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last status code</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {list.data?.data.length === 0 && (
              <tr>
                <td colSpan={6}>No deliveries{status || event ? ' match the filters' : ' yet'}.</td>
              </tr>
            )}
            {list.data?.data.map((d) => (
              <tr key={d.id}>
                <td>
                  <a
                    href={href({ page: 'delivery', webhookId: webhook.id, deliveryId: d.id })}
                    aria-label={`Delivery ${d.id}`}
                  >
                    {shortId(d.id)}
                  </a>
                </td>
                <td>{d.event}</td>
                <td>
                  <StatusBadge status={d.status} />
                </td>
                <td class="num">{d.attempt_count}</td>
                <td class="num">{d.last_status_code ?? '—'}</td>
                <td>{when(d.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableBox>
    </section>
  );
}
