import { loadConfig } from '../config/load-config';
import { WebhookSlots } from './webhook-slots';

describe('WebhookSlots', () => {
  const slots = () => new WebhookSlots(loadConfig({ DELIVERY_CONCURRENCY_PER_WEBHOOK: '2' }));

  it('gives each webhook at most its limit of slots, others unaffected', () => {
    const s = slots();
    const a1 = s.tryAcquire('a');
    const a2 = s.tryAcquire('a');
    expect(a1).not.toBeNull();
    expect(a2).not.toBeNull();
    expect(s.tryAcquire('a')).toBeNull();
    expect(s.tryAcquire('b')).not.toBeNull();
  });

  it('frees a slot on release, once however often it is called', () => {
    const s = slots();
    const a1 = s.tryAcquire('a')!;
    s.tryAcquire('a');
    a1();
    a1();
    expect(s.tryAcquire('a')).not.toBeNull();
    expect(s.tryAcquire('a')).toBeNull();
  });
});
