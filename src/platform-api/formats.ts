import { isIPv4, isIPv6 } from 'node:net';

/**
 * The formats of the platform's document as JSON Schema defines them, so that a value the
 * published document accepts is never refused here for its format (docs/api.md#platform-passthrough).
 * ajv-formats' own `email` is a practical subset of the standard's (no quoted local part, no
 * address literal, a dot required in the domain), so it is replaced; the others are
 * ajv-formats' as they are (`int64` is bounded to ±(2^53-1) in the document itself:
 * src/common/openapi-exact.ts; `start_time` has its own rule, stated in the document:
 * schema-leniency.ts).
 */

/** RFC 5321 atext: the characters of a dot-string's atoms. */
const ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
const DOT_STRING = `${ATOM}(?:\\.${ATOM})*`;
/** qtextSMTP (%d32-33, %d35-91, %d93-126) or a quoted pair (backslash and %d32-126). */
const QUOTED_STRING = '"(?:[\\x20\\x21\\x23-\\x5b\\x5d-\\x7e]|\\\\[\\x20-\\x7e])*"';
const SUB_DOMAIN = '[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?';
const DOMAIN = `${SUB_DOMAIN}(?:\\.${SUB_DOMAIN})*`;
const LOCAL_PART = new RegExp(`^(?:${DOT_STRING}|${QUOTED_STRING})$`);
const DOMAIN_NAME = new RegExp(`^${DOMAIN}$`);
/** General-address-literal: a standardized tag, `:`, then dcontent (%d33-90, %d94-126). */
const GENERAL_LITERAL = /^([A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?):[\x21-\x5a\x5e-\x7e]+$/;

function isAddressLiteral(inside: string): boolean {
  if (isIPv4(inside)) return true;
  if (/^IPv6:/i.test(inside)) return isIPv6(inside.slice(5));
  // "IPv6" is a registered tag: its literal is an IPv6 address or nothing.
  const general = GENERAL_LITERAL.exec(inside);
  return general !== null && general[1].toLowerCase() !== 'ipv6';
}

/**
 * RFC 5321's Mailbox (JSON Schema's `email`): a dot-string or quoted local part, `@`, then a
 * domain (one label or more) or an address literal in brackets. Lengths are the SMTP server's
 * limits, not the syntax's: the platform judges those.
 */
export function isMailbox(text: string): boolean {
  // The domain holds no `@` but an address literal may: it begins at the last `@[` then.
  const at = text.endsWith(']') ? text.lastIndexOf('@[') : text.lastIndexOf('@');
  if (at <= 0) return false;
  const local = text.slice(0, at);
  const domain = text.slice(at + 1);
  if (!LOCAL_PART.test(local)) return false;
  if (domain.startsWith('[') && domain.endsWith(']')) return isAddressLiteral(domain.slice(1, -1));
  return DOMAIN_NAME.test(domain);
}
