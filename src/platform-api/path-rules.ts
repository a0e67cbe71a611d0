import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

/**
 * What the module that mounts an operation knows about one of its path parameters, beyond the
 * platform's published schema. The engine applies it (validation, the API document, the
 * platform call) without knowing what the parameter is: meetings and webinars own theirs
 * (src/meetings/meeting-path-rules.ts), recordings its own (src/recordings/recording-path-rules.ts).
 */
export interface PathParamRule {
  /** Why the value is refused (400), or null; the engine's own rule (empty, `.`, `..`) runs first. */
  problem?: (name: string, value: string) => string | null;
  /**
   * The value as the platform's path takes it, when encoding it once is not what the platform
   * wants. The result must stay one path segment: the platform client refuses one that does not.
   */
  encode?: (value: string) => string;
  /** How the API document states the parameter, when it differs from the platform's schema. */
  document?: { description: string; schema: SchemaObject };
}

/** One module's rules, by path parameter name; a parameter without one is the engine's alone. */
export type PathRules = Readonly<Partial<Record<string, PathParamRule>>>;
