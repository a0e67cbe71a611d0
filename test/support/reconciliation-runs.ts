import { Json, request } from './http';
import { waitFor } from './wait-for';

/** The service and the bridge:admin token that runs are asked for with. */
export interface RunsApi {
  baseUrl: string;
  admin: string;
}

/** POST /api/reconciliations: the run, queued. */
export async function startRun(api: RunsApi, body: Record<string, unknown>): Promise<Json> {
  const res = await request(api.baseUrl, 'POST', '/api/reconciliations', {
    token: api.admin,
    body,
  });
  expect(res.status).toBe(202);
  expect(res.body.status).toBe('queued');
  return res.body;
}

/** GET /api/reconciliations/:id as it stands. */
export async function runNow(api: RunsApi, id: string): Promise<Json> {
  return (await request(api.baseUrl, 'GET', `/api/reconciliations/${id}`, { token: api.admin }))
    .body;
}

/** The run once it has ended (its `finished_at` set). */
export async function finishedRun(api: RunsApi, id: string, timeoutMs = 50_000): Promise<Json> {
  let last: Json;
  return waitFor(
    async () => {
      last = await runNow(api, id);
      return last.finished_at ? last : undefined;
    },
    { timeoutMs, intervalMs: 100, what: `run ${id} to end (last seen ${JSON.stringify(last)})` },
  );
}
