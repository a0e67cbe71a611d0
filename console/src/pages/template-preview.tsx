import { useEffect, useState } from 'preact/hooks';
import { Api } from '../api';
import { parseEvents } from '../logic';
import type { EventType } from '../types';

interface Rendered {
  output: unknown;
  bytes: number;
  warnings: string[];
}

/** The destination types a webhook made here may have (brokers are set through the API). */
export const FORM_TYPES = ['http', 'slack', 'teams', 'discord'] as const;

/**
 * The kind a preview shows: the first of the webhook's events (as typed) that the catalog
 * knows, so a wildcard or a kind still being typed falls back to job.started.
 */
export function previewEvent(events: string, catalog: EventType[] | undefined): string {
  return parseEvents(events).find((e) => catalog?.some((t) => t.name === e)) ?? 'job.started';
}

/**
 * The type a preview renders for: a broker destination sends what an http one does (the body,
 * or the template's output), so it previews as http.
 */
export function previewType(destinationType: string | undefined): string {
  return FORM_TYPES.find((t) => t === destinationType) ?? 'http';
}

/**
 * A live preview of what a webhook of `type` would send for `event` (docs/templates.md): the
 * template's output on the event catalog's example body, or, with no template, a chat type's
 * built-in message (the body itself for http). Asked of POST /api/templates/render a moment
 * after the last keystroke, so typing does not send a request per character.
 */
export function TemplatePreview({
  api,
  template,
  type,
  event,
}: {
  api: Api;
  template: string;
  type: string;
  event: string;
}) {
  const [shown, setShown] = useState<{ ok: Rendered } | { error: string } | null>(null);
  useEffect(() => {
    let current = true;
    const timer = setTimeout(() => {
      api
        .post<Rendered>('/api/templates/render', {
          template: template.trim() === '' ? null : template,
          type,
          event,
        })
        .then((ok) => current && setShown({ ok }))
        .catch((error: Error) => current && setShown({ error: error.message }));
    }, 300);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [api, template, type, event]);
  if (shown === null) return <p class="hint">Preparing the preview…</p>;
  if ('error' in shown) {
    return (
      <p class="error" role="alert" id="template-preview">
        {shown.error}
      </p>
    );
  }
  return (
    <div id="template-preview">
      <p class="hint">
        {template.trim() === '' && type !== 'http' ? 'The built-in message' : 'What is sent'} for{' '}
        {event}: {shown.ok.bytes} bytes
      </p>
      <pre>{JSON.stringify(shown.ok.output, null, 2)}</pre>
      {shown.ok.warnings.map((w) => (
        <p class="hint" key={w}>
          Warning: {w}
        </p>
      ))}
    </div>
  );
}
