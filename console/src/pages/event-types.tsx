import { Api } from '../api';
import { exampleFor } from '../logic';
import type { EventType } from '../types';
import { ErrorMessage, PageTitle, useLoad } from '../ui';

export function EventTypesPage({ api }: { api: Api }) {
  const catalog = useLoad(() => api.get<{ data: EventType[] }>('/api/event-types'), [api]);
  return (
    <>
      <PageTitle>Event types</PageTitle>
      <ErrorMessage error={catalog.error} />
      {!catalog.data && !catalog.error && <p role="status">Loading…</p>}
      {catalog.data?.data.map((type) => {
        const id = `type-${type.name.replace(/[^a-z0-9]/gi, '-')}`;
        return (
          <section key={type.name} class="event-type" aria-labelledby={id}>
            <h2 id={id}>{type.name}</h2>
            <p>{type.description}</p>
            <details>
              <summary>Schema</summary>
              <pre class="code" tabIndex={0} aria-label={`Schema of ${type.name}`}>
                {JSON.stringify(type.schema, null, 2)}
              </pre>
            </details>
            <details>
              <summary>Example body</summary>
              <pre class="code" tabIndex={0} aria-label={`Example body of ${type.name}`}>
                {JSON.stringify(exampleFor(type.schema), null, 2)}
              </pre>
            </details>
          </section>
        );
      })}
    </>
  );
}
