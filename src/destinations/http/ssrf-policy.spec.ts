import { UrlPolicyError, checkWebhookUrl, isPublicAddress } from './ssrf-policy';

describe('isPublicAddress', () => {
  it.each([
    '127.0.0.1',
    '127.1.2.3',
    '10.0.0.1',
    '172.16.5.4',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '100.100.100.200',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fc00::1',
    'fd00:ec2::254',
    'fe80::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '2002:7f00:1::',
    // IPv4-compatible (::/96): loopback, the metadata address, and even a public one.
    '::7f00:1',
    '::127.0.0.1',
    '::a9fe:a9fe',
    '::808:808',
    '0:0:0:0:0:0:a00:1',
    'not-an-ip',
  ])('refuses %s', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(['8.8.8.8', '93.184.216.34', '2606:4700:4700::1111', '::ffff:8.8.8.8'])(
    'accepts %s',
    (address) => {
      expect(isPublicAddress(address)).toBe(true);
    },
  );
});

describe('checkWebhookUrl', () => {
  const resolveTo =
    (...addresses: string[]) =>
    async () =>
      addresses;

  it('accepts a public host and returns what it resolved to', async () => {
    await expect(
      checkWebhookUrl('https://hooks.example.com/x', {
        allowPrivate: false,
        resolve: resolveTo('93.184.216.34'),
      }),
    ).resolves.toEqual(['93.184.216.34']);
  });

  it.each([
    ['http://127.0.0.1/', /127\.0\.0\.1/],
    ['http://[::1]:8080/', /::1/],
    ['http://169.254.169.254/latest/meta-data', /169\.254\.169\.254/],
    ['ftp://example.com/', /http or https/],
    ['https://user:pw@example.com/', /credentials/],
    ['not a url', /absolute/],
  ])('refuses %s', async (url, message) => {
    await expect(
      checkWebhookUrl(url, { allowPrivate: false, resolve: resolveTo('93.184.216.34') }),
    ).rejects.toThrow(message);
  });

  it('refuses a name when any of its addresses is private (DNS rebinding)', async () => {
    await expect(
      checkWebhookUrl('https://rebind.example.com/', {
        allowPrivate: false,
        resolve: resolveTo('93.184.216.34', '10.0.0.7'),
      }),
    ).rejects.toBeInstanceOf(UrlPolicyError);
  });

  it('resolves localhost through the system resolver and refuses it', async () => {
    await expect(checkWebhookUrl('http://localhost:9/', { allowPrivate: false })).rejects.toThrow(
      /private or special-purpose/,
    );
  });

  it('allows private addresses when told to', async () => {
    await expect(checkWebhookUrl('http://127.0.0.1:9/', { allowPrivate: true })).resolves.toEqual([
      '127.0.0.1',
    ]);
  });
});
