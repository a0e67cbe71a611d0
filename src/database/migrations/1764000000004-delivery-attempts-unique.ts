import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * One row per attempt number of a delivery. The processor records an attempt only if the
 * delivery is still where it left it, and this index makes a second writer of the same attempt
 * (a worker that stalled and was replaced) fail instead of logging the attempt twice.
 */
export class DeliveryAttemptsUnique1764000000004 implements MigrationInterface {
  name = 'DeliveryAttemptsUnique1764000000004';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX delivery_attempts_delivery_idx`);
    await q.query(
      `CREATE UNIQUE INDEX delivery_attempts_delivery_attempt_uq ON delivery_attempts (delivery_id, attempt)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX delivery_attempts_delivery_attempt_uq`);
    await q.query(
      `CREATE INDEX delivery_attempts_delivery_idx ON delivery_attempts (delivery_id, attempt)`,
    );
  }
}
