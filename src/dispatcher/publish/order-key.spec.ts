import { ORDER_KEY_MAX_LENGTH, orderKeyOf } from './order-key';

describe('orderKeyOf', () => {
  it("is the platform object's uuid", () => {
    expect(orderKeyOf({ uuid: 'aDYlohsHRtCd4ii1uC2+hA==', id: 85746065432 })).toBe(
      'aDYlohsHRtCd4ii1uC2+hA==',
    );
  });

  it('is null when the object has no usable uuid: such an event is not ordered', () => {
    for (const object of [
      null,
      undefined,
      {},
      { uuid: '' },
      { uuid: 42 },
      { uuid: 'x'.repeat(ORDER_KEY_MAX_LENGTH + 1) },
    ]) {
      expect(orderKeyOf(object)).toBeNull();
    }
  });

  it('keeps a uuid PostgreSQL cannot store as text storable (U+FFFD for U+0000 and lone surrogates)', () => {
    expect(orderKeyOf({ uuid: 'a\u0000b\udc00' })).toBe('a\uFFFDb\uFFFD');
  });
});
