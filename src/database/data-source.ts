import 'reflect-metadata';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { loadConfigFromProcess } from '../config/load-config';
import { dataSourceOptions } from './data-source-options';

// Used by the TypeORM CLI (npm run migration:*); the app builds its own from the same options.
export default new DataSource({
  ...dataSourceOptions(loadConfigFromProcess()),
  entities: [join(__dirname, '..', '**', '*.entity.{ts,js}')],
});
