/**
 * The client id and secret of a Basic header, as candidates to try in order. RFC 6749 §2.3.1
 * form-urlencodes both before base64, but many clients (Swagger UI, curl -u, browsers) send
 * them raw; so a pair that decodes to something else is offered both ways, and a secret
 * holding `+` or `%` works from either. Null when the header is not Basic or has no colon.
 */
export function basicCredentials(header: string | undefined): [string, string][] | null {
  const match = /^Basic ([A-Za-z0-9+/]+=*)$/i.exec(header ?? '');
  if (!match) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  const formDecode = (s: string) => {
    try {
      return decodeURIComponent(s.replace(/\+/g, ' '));
    } catch {
      return s;
    }
  };
  const raw: [string, string] = [decoded.slice(0, colon), decoded.slice(colon + 1)];
  const form: [string, string] = [formDecode(raw[0]), formDecode(raw[1])];
  return form[0] === raw[0] && form[1] === raw[1] ? [raw] : [form, raw];
}
