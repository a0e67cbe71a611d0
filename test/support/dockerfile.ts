/** Just enough of Docker's file formats for static checks: Dockerfile instructions and .dockerignore. */

export interface Instruction {
  keyword: string;
  args: string;
}

// Enough of the Dockerfile grammar for these files: comments, blank lines and `\` continuations.
export function parseDockerfile(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  let pending = '';
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      continue;
    }
    const full = pending + line;
    pending = '';
    const match = /^(\S+)\s*([\s\S]*)$/.exec(full);
    if (match)
      instructions.push({
        keyword: match[1].toUpperCase(),
        args: match[2].trim(),
      });
  }
  return instructions;
}

export function stages(instructions: Instruction[]): Instruction[][] {
  const result: Instruction[][] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') result.push([]);
    result[result.length - 1]?.push(instruction);
  }
  return result;
}

export function execForm(args: string): string[] | undefined {
  try {
    const value: unknown = JSON.parse(args);
    return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : undefined;
  } catch {
    return undefined;
  }
}

// Docker's matching rules, reduced to what .dockerignore files use: `*`, `**`, `?`, `!`,
// and a matched directory taking its contents with it. The last matching line wins.
export function dockerIgnored(patterns: string[], file: string): boolean {
  const toRegExp = (pattern: string): RegExp => {
    const body = pattern
      .replace(/^\/+|\/+$/g, '')
      .split('/')
      .map((part) =>
        part === '**'
          ? '.*'
          : part
              .replace(/[.+^${}()|[\]\\]/g, '\\$&')
              .replace(/\*/g, '[^/]*')
              .replace(/\?/g, '[^/]'),
      )
      .join('/');
    return new RegExp(`^${body}(/.*)?$`);
  };
  let ignored = false;
  for (const pattern of patterns) {
    const negated = pattern.startsWith('!');
    if (toRegExp(negated ? pattern.slice(1) : pattern).test(file)) ignored = !negated;
  }
  return ignored;
}
