import { DeliverySlots } from './delivery-slots';

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('DeliverySlots', () => {
  it('takes what is free, up to what is wanted', async () => {
    const slots = new DeliverySlots(5);
    expect(await slots.take(3)).toBe(3);
    expect(await slots.take(10)).toBe(2);
  });

  it('waits until enough slots are free, then takes them', async () => {
    const slots = new DeliverySlots(4);
    expect(await slots.take(4)).toBe(4);
    let taken: number | undefined;
    void slots.take(3, 2).then((n) => (taken = n));
    slots.give(1);
    await turn();
    // One free slot is not the two asked for.
    expect(taken).toBeUndefined();
    slots.give(2);
    await turn();
    expect(taken).toBe(3);
  });

  it('asks for no more than it wants, nor than the capacity', async () => {
    const slots = new DeliverySlots(2);
    expect(await slots.take(1)).toBe(1);
    let taken: number | undefined;
    void slots.take(1, 10).then((n) => (taken = n));
    await turn();
    expect(taken).toBe(1);
  });
});
