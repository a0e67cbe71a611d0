import { catalogChecker } from '../../../test/support/event-schemas';
import { deliveryBody } from '../../delivery-record/delivery-body';
import { EVENT_TYPES } from '../../webhooks/event-catalog';
import { mappingRuleOf } from '../event-mapping';
import { PLATFORM_EVENT_EXAMPLES } from './zoom-event.examples';

const check = catalogChecker([...EVENT_TYPES]);

// The catalog (GET /api/event-types) and what Swagger and the mapping show must not drift apart.
describe('notification examples and the event catalog', () => {
  const mapped = Object.entries(PLATFORM_EVENT_EXAMPLES).flatMap(([event, example]) => {
    const rule = mappingRuleOf(event);
    return rule && 'kind' in rule ? [[event, rule, example] as const] : [];
  });

  it.each(mapped)('what the mapping makes of the %s example validates', (event, rule, example) => {
    const object = (example as { value: { payload: { object: Record<string, unknown> } } }).value
      .payload.object;
    const body = deliveryBody({
      id: '0f8fad5b-d9cb-469f-a165-70867728950e',
      kind: rule.kind,
      createdAt: new Date(),
      data: rule.data(object),
      source: {
        platform: 'zoom',
        event,
        event_ts: 1735725605123,
        account_id: 'acc',
        tracking_id: 'v=2.0;clid=aw1;rid=WEB_4f1e3bd0c0e5a',
        via: 'webhook',
      },
    });
    expect(check(body)).toEqual([]);
  });
});
