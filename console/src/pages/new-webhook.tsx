import { useState } from 'preact/hooks';
import { Api } from '../api';
import { generateSecret, parseEvents } from '../logic';
import { href } from '../routes';
import type { EventType, Webhook } from '../types';
import { ErrorMessage, Field, PageTitle, useAction, useLoad } from '../ui';
import { FORM_TYPES, TemplatePreview, previewEvent } from './template-preview';

export function NewWebhookPage({ api, writable }: { api: Api; writable: boolean }) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState('');
  const [secret, setSecret] = useState('');
  const [type, setType] = useState<string>('http');
  const [template, setTemplate] = useState('');
  const action = useAction();
  const catalog = useLoad(() => api.get<{ data: EventType[] }>('/api/event-types'), [api]);

  const submit = async (event: Event) => {
    event.preventDefault();
    await action.run(async () => {
      const created = await api.post<Webhook>('/api/webhooks', {
        url: url.trim(),
        events: parseEvents(events),
        secret,
        ...(type !== 'http' && { destination: { type } }),
        ...(template.trim() !== '' && { template }),
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
        <label for="webhook-type">Destination</label>
        <select id="webhook-type" value={type} onChange={(e) => setType(e.currentTarget.value)}>
          {FORM_TYPES.map((t) => (
            <option key={t} value={t}>
              {t === 'http' ? 'http (the URL above)' : `${t} (its incoming webhook as the URL)`}
            </option>
          ))}
        </select>
        <label for="webhook-template">Template</label>
        <textarea
          id="webhook-template"
          rows={6}
          spellcheck={false}
          aria-describedby="webhook-template-hint"
          value={template}
          onInput={(e) => setTemplate(e.currentTarget.value)}
          placeholder='{"text": "Meeting started: " & data.topic}'
        />
        <p class="hint" id="webhook-template-hint">
          Optional: a JSONata expression over the notification body; its output is sent instead.
          Empty: the body (http) or the tool's built-in message.
        </p>
        <TemplatePreview
          api={api}
          template={template}
          type={type}
          event={previewEvent(events, catalog.data?.data)}
        />
        <ErrorMessage error={action.error} />
        <button type="submit" disabled={action.busy}>
          Create
        </button>
      </form>
    </>
  );
}
