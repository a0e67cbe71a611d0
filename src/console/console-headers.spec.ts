import { consoleSecurityHeaders } from './console-headers';

describe('consoleSecurityHeaders', () => {
  it('allows only the service itself, and no framing by default', () => {
    const headers = consoleSecurityHeaders([]);
    const csp = headers['content-security-policy'].split('; ');
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(headers['content-security-policy']).not.toMatch(/unsafe|\*|https?:/);
    expect(headers['x-frame-options']).toBe('DENY');
  });

  it('lets exactly the configured origins frame it, and drops X-Frame-Options', () => {
    const headers = consoleSecurityHeaders(['https://portal.example.com', 'http://localhost:8080']);
    expect(headers['content-security-policy']).toContain(
      'frame-ancestors https://portal.example.com http://localhost:8080',
    );
    expect(headers['x-frame-options']).toBeUndefined();
  });
});
