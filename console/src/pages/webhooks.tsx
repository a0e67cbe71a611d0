import { Api, seg } from '../api';
import { lastHourStats } from '../logic';
import { href } from '../routes';
import type { Delivery, Page, Webhook } from '../types';
import { ErrorMessage, PageTitle, TableBox, useLoad } from '../ui';

interface Row extends Webhook {
  stats: { total: number; failed: number; more: boolean } | null;
}

async function loadAll(api: Api): Promise<Row[]> {
  const webhooks: Webhook[] = [];
  let cursor: string | undefined;
  do {
    const page = await api.get<Page<Webhook>>('/api/webhooks', { limit: '100', cursor });
    webhooks.push(...page.data);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  const now = Date.now();
  return Promise.all(
    webhooks.map(async (webhook) => ({
      ...webhook,
      stats: await lastHourStats(
        (cursor) =>
          api.get<Page<Delivery>>(`/api/webhooks/${seg(webhook.id)}/deliveries`, {
            limit: '100',
            cursor,
          }),
        now,
      ).catch(() => null),
    })),
  );
}

export function WebhooksPage({ api, writable }: { api: Api; writable: boolean }) {
  const { data, error, loading } = useLoad(() => loadAll(api), [api], 15000);
  return (
    <>
      <div class="title-row">
        <PageTitle>Webhooks</PageTitle>
        {writable ? (
          <button type="button" onClick={() => (location.hash = href({ page: 'new-webhook' }))}>
            New webhook
          </button>
        ) : (
          <p class="hint">Read-only: this sign-in lacks webhooks:write.</p>
        )}
      </div>
      <ErrorMessage error={error} />
      {loading && !data && <p role="status">Loading…</p>}
      {data && (
        <TableBox label="Webhooks">
          <table>
            <caption>Webhooks</caption>
            <thead>
              <tr>
                <th scope="col">URL</th>
                <th scope="col">Events</th>
                <th scope="col">State</th>
                <th scope="col">Deliveries, last hour</th>
                <th scope="col">Failed, last hour</th>
              </tr>
            </thead>
            <tbody>
              {data.length === 0 && (
                <tr>
                  <td colSpan={5}>No webhooks yet.</td>
                </tr>
              )}
              {data.map((w) => (
                <tr key={w.id}>
                  <td class="url">
                    <a href={href({ page: 'webhook', id: w.id })}>{w.url}</a>
                  </td>
                  <td>{w.events.join(', ')}</td>
                  <td>{stateOf(w)}</td>
                  <td class="num">
                    {w.stats ? `${w.stats.total}${w.stats.more ? '+' : ''}` : '—'}
                  </td>
                  <td class="num">{w.stats ? w.stats.failed : '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
    </>
  );
}

const REASONS: Record<string, string> = {
  gone: 'the receiver answered 410 Gone',
  failing: 'its deliveries kept failing',
};

export function stateOf(webhook: Webhook): string {
  if (webhook.active) return 'Active';
  if (webhook.disabled_reason) {
    return `Disabled: ${REASONS[webhook.disabled_reason] ?? webhook.disabled_reason}`;
  }
  return 'Disabled';
}
