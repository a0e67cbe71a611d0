import { useState } from 'preact/hooks';
import { Api } from '../api';
import { generateSecret, parseEvents } from '../logic';
import { href } from '../routes';
import type { EventType, Webhook } from '../types';
import { ErrorMessage, Field, PageTitle, useAction, useLoad } from '../ui';

export function NewWebhookPage({ api, writable }: { api: Api; writable: boolean }) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState('');
  const [secret, setSecret] = useState('');
  const action = useAction();
  const catalog = useLoad(() => api.get<{ data: EventType[] }>('/api/event-types'), [api]);

  const submit = async (event: Event) => {
    event.preventDefault();
    await action.run(async () => {
      const created = await api.post<Webhook>('/api/webhooks', {
        url: url.trim(),
        events: parseEvents(events),
        secret,
      });
      location.hash = href({ page: 'webhook', id: created.id });
    });
  };
  return (
    <>
      <PageTitle>New webhook</PageTitle>
      {!writable && <p class="hint">Read-only: this sign-in lacks webhooks:write.</p>}
      <form class="stack" onSubmit={submit}>
        <Field
          id="webhook-url"
          label="URL"
          inputMode="url"
          autoComplete="off"
          value={url}
          onValue={setUrl}
          placeholder="https://receiver.example.com/hooks"
        />
        <Field
          id="webhook-events"
          label="Events"
          aria-describedby="webhook-events-hint"
          autoComplete="off"
          value={events}
          onValue={setEvents}
          placeholder="job.started, job.completed"
        />
        <p class="hint" id="webhook-events-hint">
          Separated by commas or spaces
          {catalog.data && `: ${catalog.data.data.map((t) => t.name).join(', ')}`}
        </p>
        <label for="webhook-secret">Secret</label>
        <div class="inline">
          <input
            id="webhook-secret"
            type="text"
            autoComplete="off"
            spellcheck={false}
            aria-describedby="webhook-secret-hint"
            value={secret}
            onInput={(e) => setSecret(e.currentTarget.value)}
          />
          <button
            type="button"
            class="secondary"
            onClick={() => setSecret(generateSecret((b) => crypto.getRandomValues(b)))}
          >
            Generate
          </button>
        </div>
        <p class="hint" id="webhook-secret-hint">
          16 to 256 characters; it signs every notification and is never shown again.
        </p>
        <ErrorMessage error={action.error} />
        <button type="submit" disabled={action.busy}>
          Create
        </button>
      </form>
    </>
  );
}
