import { isMailbox } from './formats';

describe('isMailbox (RFC 5321, as JSON Schema reads `email`)', () => {
  it.each([
    'joe.bloggs@example.com',
    '"joe bloggs"@example.com',
    '"a@b"@example.com',
    '"quoted\\"pair"@example.com',
    "!#$%&'*+/=?^_`{|}~-@example.com",
    'joe@[127.0.0.1]',
    'joe@[IPv6:::1]',
    'joe@[tag:opaque]',
    'postmaster@localhost',
  ])('takes %s', (text) => expect(isMailbox(text)).toBe(true));

  it.each([
    '2962',
    '@example.com',
    'joe@',
    '.test@example.com',
    'test.@example.com',
    'te..st@example.com',
    'joe@[127.0.0.300]',
    'joe@[IPv6:::12345]',
    'joe@-example.com',
    'joe@example-.com',
    'joe@example..com',
    'jürgen@example.com',
    'a b@example.com',
  ])('refuses %s', (text) => expect(isMailbox(text)).toBe(false));
});
