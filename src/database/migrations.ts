import { InitialSchema1763800000000 } from './migrations/1763800000000-initial-schema';
import { DeliveryAttemptsUnique1764000000004 } from './migrations/1764000000004-delivery-attempts-unique';
import { DeliveryLease1764100000000 } from './migrations/1764100000000-delivery-lease';
import { EventBody1764100000001 } from './migrations/1764100000001-event-body';

/** Every migration, in order. New migrations are appended here. */
export const MIGRATIONS = [
  InitialSchema1763800000000,
  DeliveryAttemptsUnique1764000000004,
  DeliveryLease1764100000000,
  EventBody1764100000001,
];
