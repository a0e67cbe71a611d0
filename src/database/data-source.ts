import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { loadConfigFromProcess } from '../config/load-config';
import { cliDataSourceOptions } from './data-source-options';

// Used by the TypeORM CLI (npm run migration:*); the app builds its own from the same options.
export default new DataSource(cliDataSourceOptions(loadConfigFromProcess()));
