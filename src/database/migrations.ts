import { InitialSchema1763800000000 } from './migrations/1763800000000-initial-schema';

/** Every migration, in order. New migrations are appended here. */
export const MIGRATIONS = [InitialSchema1763800000000];
