import { readFileSync, readdirSync } from 'fs';
import { join, relative } from 'path';
import {
  Node,
  ScriptTarget,
  createSourceFile,
  forEachChild,
  isNoSubstitutionTemplateLiteral,
  isStringLiteral,
  isTemplateHead,
  isTemplateMiddle,
  isTemplateTail,
} from 'typescript';
import { INBOUND_VIAS } from '../../common/inbound-via';

const SRC = join(__dirname, '..', '..');
/** The one list of the ways in. */
const LIST = 'common/inbound-via.ts';

/**
 * Left out, each for its reason: specs state what they expect literally; a migration is frozen
 * and carries the list as it stood (inbound-via.spec.ts holds its check equal to the list);
 * the CLI's client is generated from the OpenAPI document, itself derived from the list.
 */
const LEFT_OUT = [/\.spec\.ts$/, /^database\/migrations\//, /^cli\/generated\//];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

/** The string literals of a file's code (comments are not code), as their text. */
function stringLiterals(text: string): { literal: string; line: number }[] {
  const file = createSourceFile('file.tsx', text, ScriptTarget.Latest, true);
  const found: { literal: string; line: number }[] = [];
  const visit = (node: Node): void => {
    if (
      isStringLiteral(node) ||
      isNoSubstitutionTemplateLiteral(node) ||
      isTemplateHead(node) ||
      isTemplateMiddle(node) ||
      isTemplateTail(node)
    ) {
      found.push({
        literal: node.text,
        line: file.getLineAndCharacterOfPosition(node.getStart()).line + 1,
      });
    }
    forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe('the ways in are named in one list (src/common/inbound-via.ts)', () => {
  it('no file of src/ but the list writes a way in as a string', () => {
    const ways = new Set<string>(INBOUND_VIAS);
    const named = sourceFiles(SRC)
      .map((file) => relative(SRC, file))
      .filter((file) => file !== LIST && !LEFT_OUT.some((rule) => rule.test(file)))
      .flatMap((file) =>
        stringLiterals(readFileSync(join(SRC, file), 'utf8'))
          .filter(({ literal }) => ways.has(literal))
          .map(({ literal, line }) => `${file}:${line} '${literal}'`),
      );
    expect(named).toEqual([]);
  });

  it('finds a way in written as a string, in quotes, backquotes or a template text, not in a comment', () => {
    const code =
      "// 'webhook'\nconst a = 'webhook';\nconst b = `websocket`;\nconst c = 'webhooks';\nconst d = `${c}reconciliation${c}`;\nconst e = `${c}${'reconciliation'}`;";
    expect(
      stringLiterals(code).filter(({ literal }) => INBOUND_VIAS.includes(literal as never)),
    ).toEqual([
      { literal: 'webhook', line: 2 },
      { literal: 'websocket', line: 3 },
      { literal: 'reconciliation', line: 5 },
      { literal: 'reconciliation', line: 6 },
    ]);
  });
});
