#!/usr/bin/env node
/* The `meb` CLI: the built one when there is a build (npm run build), else from the sources. */
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const built = join(__dirname, '..', 'dist', 'cli', 'main.js');
if (existsSync(built)) {
  require(built);
} else {
  require('ts-node').register({
    transpileOnly: true,
    project: join(__dirname, '..', 'tsconfig.json'),
  });
  require(join(__dirname, '..', 'src', 'cli', 'main.ts'));
}
