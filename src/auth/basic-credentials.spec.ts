import { basicCredentials } from './basic-credentials';

const basic = (pair: string) => `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`;

describe('basicCredentials', () => {
  it('splits at the first colon, so a secret may contain colons', () => {
    expect(basicCredentials(basic('ops:se:cr:et'))).toEqual([['ops', 'se:cr:et']]);
  });

  it('offers the form-decoded pair first and the raw pair second when they differ', () => {
    expect(basicCredentials(basic('my%20app:a+b%2Bc'))).toEqual([
      ['my app', 'a b+c'],
      ['my%20app', 'a+b%2Bc'],
    ]);
  });

  it('keeps a pair whose percent signs do not decode as it is', () => {
    expect(basicCredentials(basic('ops:100%'))).toEqual([['ops', '100%']]);
  });

  it.each([
    ['no header', undefined],
    ['a bearer token', 'Bearer abc.def.ghi'],
    ['no colon', basic('justaname')],
    ['not base64', 'Basic ***'],
    ['an empty scheme', 'Basic '],
  ])('returns null for %s', (_, header) => {
    expect(basicCredentials(header)).toBeNull();
  });
});
