import { Api, ApiProblem, problemFrom, withQuery } from './api';

/** A fetch that answers from a list and records what it was asked. */
function fakeFetch(answers: { status: number; body?: unknown }[]) {
  const calls: { url: string; init?: RequestInit }[] = [];
  const fetch = async (url: string, init?: RequestInit) => {
    calls.push({ url, init });
    const answer = answers.shift() ?? { status: 500 };
    return new Response(answer.body === undefined ? null : JSON.stringify(answer.body), {
      status: answer.status,
      headers: { 'content-type': 'application/json' },
    });
  };
  return { fetch, calls };
}

describe('Api', () => {
  it('sends the bearer token and JSON, and returns the parsed answer', async () => {
    const { fetch, calls } = fakeFetch([{ status: 201, body: { id: 'w1' } }]);
    const api = new Api({ token: 'tok', fetch });
    await expect(api.post('/api/webhooks', { url: 'u' })).resolves.toEqual({ id: 'w1' });
    expect(calls[0].url).toBe('/api/webhooks');
    expect(calls[0].init?.method).toBe('POST');
    expect(calls[0].init?.headers).toMatchObject({
      authorization: 'Bearer tok',
      'content-type': 'application/json',
    });
    expect(calls[0].init?.body).toBe('{"url":"u"}');
    expect(calls[0].init?.credentials).toBe('omit');
  });

  it("turns an error answer into an ApiProblem with the API's own message", async () => {
    const { fetch } = fakeFetch([
      {
        status: 400,
        body: {
          statusCode: 400,
          error: 'Bad Request',
          message: 'url must be an absolute http or https URL',
          details: [{ field: 'url', message: 'url must be an absolute http or https URL' }],
        },
      },
    ]);
    const problem = await new Api({ token: 't', fetch })
      .post('/api/webhooks', {})
      .catch((e: unknown) => e);
    expect(problem).toBeInstanceOf(ApiProblem);
    expect((problem as ApiProblem).message).toBe('url must be an absolute http or https URL');
    expect((problem as ApiProblem).status).toBe(400);
  });

  it('tells the session about a 401 so the sign-in page returns', async () => {
    const { fetch } = fakeFetch([
      { status: 401, body: { message: 'The bearer token is invalid or expired' } },
    ]);
    const told: string[] = [];
    const api = new Api({ token: 't', fetch, onUnauthorized: (p) => told.push(p.message) });
    await expect(api.get('/api/webhooks')).rejects.toThrow(
      'The bearer token is invalid or expired',
    );
    expect(told).toEqual(['The bearer token is invalid or expired']);
  });

  it('says the service cannot be reached when fetch itself fails', async () => {
    const api = new Api({
      token: 't',
      fetch: () => Promise.reject(new TypeError('Failed to fetch')),
    });
    await expect(api.get('/api/webhooks')).rejects.toMatchObject({ status: 0 });
  });
});

describe('problemFrom', () => {
  it('uses the message, else the OAuth description, else the status', () => {
    expect(
      problemFrom(401, { error: 'invalid_client', error_description: 'Bad client' }).message,
    ).toBe('Bad client');
    expect(problemFrom(502, 'not json').message).toBe('The service answered HTTP 502');
  });

  it('recognises a 404 from a route the service lacks, not from a missing record', () => {
    expect(problemFrom(404, { message: 'Cannot GET /api/events/x' }).noRoute).toBe(true);
    expect(problemFrom(404, { message: 'Event not found' }).noRoute).toBe(false);
  });
});

describe('withQuery', () => {
  it('leaves out empty filters and encodes the rest', () => {
    expect(withQuery('/api/events', { tracking_id: 'a b&c', cursor: undefined, event: '' })).toBe(
      '/api/events?tracking_id=a+b%26c',
    );
    expect(withQuery('/api/webhooks')).toBe('/api/webhooks');
  });
});
