/**
 * The headers of every answer under /console. The console loads nothing from any other
 * origin (docs/console.md), so every fetch directive allows only 'self' and everything else is
 * 'none': an injected script or a tampered asset URL has nowhere to load from or send to.
 */
export function consoleSecurityHeaders(frameAncestors: readonly string[]): Record<string, string> {
  const ancestors = frameAncestors.length > 0 ? frameAncestors.join(' ') : "'none'";
  const csp = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    "font-src 'self'",
    "connect-src 'self'",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${ancestors}`,
  ].join('; ');
  const headers: Record<string, string> = {
    'content-security-policy': csp,
    'x-content-type-options': 'nosniff',
    // The portal link's token travels in the fragment, which browsers never send; no-referrer
    // keeps even the path of a console page out of other sites' logs.
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
  };
  // Browsers without frame-ancestors fall back on X-Frame-Options, which cannot list origins:
  // it is only sent when no origin may frame the console.
  if (frameAncestors.length === 0) headers['x-frame-options'] = 'DENY';
  return headers;
}
