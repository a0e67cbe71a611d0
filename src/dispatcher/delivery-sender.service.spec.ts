import { RESPONSE_EXCERPT_BYTES, excerptText } from './delivery-sender.service';

describe('excerptText', () => {
  it('keeps the first 1 KiB', () => {
    expect(excerptText(Buffer.alloc(5000, 'a'))).toBe('a'.repeat(RESPONSE_EXCERPT_BYTES));
    expect(excerptText(Buffer.from('short'))).toBe('short');
  });

  it('replaces NUL, which PostgreSQL text cannot store', () => {
    expect(excerptText(Buffer.from([0x61, 0x00, 0x62]))).toBe('a\uFFFDb');
  });

  it('never yields invalid UTF-8 when the cut splits a character', () => {
    const text = excerptText(Buffer.from('x'.repeat(RESPONSE_EXCERPT_BYTES - 1) + 'é'));
    expect(text.endsWith('\uFFFD')).toBe(true);
    expect(Buffer.from(text, 'utf8').toString('utf8')).toBe(text);
  });
});
