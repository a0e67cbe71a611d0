/** An API client's id and secret, as AUTH_CLIENTS lists them. */
export interface ClientCredentials {
  client_id: string;
  client_secret: string;
}

/**
 * A bearer token for an API client, as the client gets one: the client-credentials grant at
 * /oauth/token (`scope`, when given, a subset of the client's scopes). Throws on any other
 * answer than 200.
 */
export async function clientToken(
  baseUrl: string,
  client: ClientCredentials,
  scope?: string,
): Promise<string> {
  const body = new URLSearchParams({ grant_type: 'client_credentials' });
  if (scope) body.set('scope', scope);
  const basic = Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64');
  const res = await fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${basic}` },
    body,
  });
  if (res.status !== 200) {
    throw new Error(`token for ${client.client_id}: ${res.status} ${await res.text()}`);
  }
  return ((await res.json()) as { access_token: string }).access_token;
}
