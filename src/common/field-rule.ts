import { ValidateBy } from 'class-validator';

/**
 * Says what is wrong with `value` as one whole message naming `field`, or null when it is
 * fine. Messages must never repeat a secret value.
 */
export type FieldRule = (value: unknown, field: string) => string | null;

/**
 * Validates a property with one rule. A stack of stock decorators reports one message per
 * failed constraint (a missing url would be "must be a string", "must be a URL" and "must be
 * shorter than …" at once); a rule reports the single reason that applies.
 * With `optional`, an absent property passes, but an explicit null does not.
 */
export function Satisfies(
  rule: FieldRule,
  options: { optional?: boolean } = {},
): PropertyDecorator {
  return ValidateBy({
    name: 'satisfies',
    validator: {
      validate: (value: unknown, args) =>
        (options.optional === true && value === undefined) ||
        rule(value, args?.property ?? '') === null,
      defaultMessage: (args) => (args ? rule(args.value, args.property) : null) ?? 'is invalid',
    },
  });
}

/** A client-supplied value shown in a message: quoted, and cut short if long. */
export function quote(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 37)}…` : text;
}
