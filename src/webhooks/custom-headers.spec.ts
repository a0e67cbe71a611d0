import { headersRule, maskHeaderValue, maskHeaders } from './custom-headers';

describe('custom headers', () => {
  it.each([
    [{ Authorization: 'Bearer x', 'X-Tenant': 'acme' }, null],
    [{}, null],
    [{ 'content-type': 'x' }, 'headers.content-type:'],
    [{ 'Transfer-Encoding': 'x' }, 'headers.Transfer-Encoding:'],
    [{ TraceParent: 'x' }, 'headers.TraceParent:'],
    [{ 'X-SERVICE-SIGNATURE': 'x' }, 'headers.X-SERVICE-SIGNATURE:'],
    [{ 'Webhook-Timestamp': 'x' }, 'headers.Webhook-Timestamp:'],
    [{ 'a:b': 'x' }, 'headers["a:b"]: a header name must be an HTTP token'],
    [{ 'a b': 'x' }, 'headers["a b"]: a header name must be an HTTP token'],
    [{ 'X-A': 'tab\there' }, 'headers.X-A must be printable ASCII'],
    [{ 'X-A': 'é' }, 'headers.X-A must be printable ASCII'],
    [{ 'X-A': 'x'.repeat(1024) }, null],
    [{ 'X-A': null }, 'headers.X-A must be a string'],
    [['X-A'], 'headers must be an object'],
    ...['Expect', 'Upgrade', 'Keep-Alive', 'Connection', 'TE', 'Trailer', 'Transfer-Encoding']
      .concat(['Proxy-Connection', 'Content-Encoding', 'HTTP2-Settings'])
      .map((name): [Record<string, string>, string] => [{ [name]: 'x' }, `headers.${name}:`]),
    [{ ['X'.repeat(256)]: 'x' }, null],
    [{ ['X'.repeat(257)]: 'x' }, 'at most 256 characters, got 257'],
  ])('%j → %s', (headers, problem) => {
    const message = headersRule(headers, 'headers');
    if (problem === null) expect(message).toBeNull();
    else expect(message).toContain(problem);
  });

  it('never repeats a value in a message', () => {
    expect(headersRule({ 'X-A': 'secret\nvalue' }, 'headers')).not.toContain('secret');
  });

  it('masks to the last four characters, or entirely when short', () => {
    expect(maskHeaderValue('Bearer abcdefgh1234')).toBe('****1234');
    expect(maskHeaderValue('short-value')).toBe('****');
    expect(maskHeaders({ A: 'x', B: '0123456789abcdef' })).toEqual({ A: '****', B: '****cdef' });
  });
});
