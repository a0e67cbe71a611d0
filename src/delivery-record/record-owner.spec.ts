import { readFileSync, readdirSync } from 'fs';
import { join, relative } from 'path';

const SRC = join(__dirname, '..');

/** Where SQL may name the record's tables: this module, and the migrations that made them. */
const OWNERS = [__dirname, join(SRC, 'database', 'migrations')];

/** A statement naming events, deliveries or delivery_attempts as the table it reads or writes. */
const NAMES_RECORD =
  /\b(FROM|INTO|UPDATE|JOIN|TABLE|USING)\s+"?(events|deliveries|delivery_attempts)\b/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return OWNERS.includes(path) ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('the delivery record has one owner (docs/architecture.md)', () => {
  it('no file outside src/delivery-record/ runs SQL on events, deliveries or delivery_attempts', () => {
    const outside = sourceFiles(SRC).flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, i) =>
          NAMES_RECORD.test(line) ? [`${relative(SRC, file)}:${i + 1}: ${line.trim()}`] : [],
        ),
    );
    expect(outside).toEqual([]);
  });

  it('finds such SQL where it is (the scan is not blind)', () => {
    const inside = readFileSync(join(__dirname, 'delivery.store.ts'), 'utf8');
    expect(NAMES_RECORD.test(inside)).toBe(true);
  });
});
