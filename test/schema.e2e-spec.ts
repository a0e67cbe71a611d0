import { DataSource } from 'typeorm';
import { cliDataSourceOptions } from '../src/database/data-source-options';
import { TestApp, startTestApp } from './support/test-app';

describe('database schema', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('matches every entity exactly after the migrations, so migration:generate finds nothing', async () => {
    // The CLI's data source (every *.entity file), not only the entities the app registered.
    const cli = new DataSource({ ...cliDataSourceOptions(t.config), migrationsRun: false });
    await cli.initialize();
    try {
      expect(cli.entityMetadatas.map((m) => m.tableName).sort()).toEqual([
        'deliveries',
        'delivery_attempts',
        'events',
        'inbound_events',
        'webhooks',
      ]);
      const sqlInMemory = await cli.driver.createSchemaBuilder().log();
      expect(sqlInMemory.upQueries.map((q) => q.query)).toEqual([]);
    } finally {
      await cli.destroy();
    }
  });

  it('can revert every migration and apply them again', async () => {
    const ds = t.app.get(DataSource);
    const count = ds.migrations.length;
    for (let i = 0; i < count; i++) await ds.undoLastMigration({ transaction: 'each' });
    const left = await ds.query(
      `SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public' AND table_name <> 'migrations'`,
    );
    expect(left[0].n).toBe(0);
    expect(await ds.runMigrations({ transaction: 'each' })).toHaveLength(count);
  });
});
