/**
 * Card data must never reach a log line or an error: anything that looks like a card number (13-19
 * digits, grouped with spaces, dashes, dots, slashes or plus signs) is masked, a security code
 * mentioned in text ("cvc 123", "CVV: 1234") is dropped, and card-shaped keys are dropped whatever
 * they hold. A wallet's payment token (Apple Pay, Google Pay) is card data too: its keys are dropped
 * the same way, in objects and in form-encoded text.
 */
const SENSITIVE_KEYS = /^(card_?number|pan|number_on_card|cvv2?|cvc2?|cv2|security_?code|card_?cvv|password|secret|hash_?secret|webhook_?secret|previous_?webhook_?secret|payment_?token|wallet_?token|payment_?data|tokenization_?data)$/i;
const PAN_LIKE = /\b\d(?:(?:[ +./-]|%20|%2[fF])?\d){12,18}\b/g;
/** A security code written out in text: "cvc 123", "CVV2: 1234", "security code is 123". */
const CODE_MENTION = /\b(cvv2?|cvc2?|cv2|csc|security[ _-]?code|card[ _-]?cvv)(\s*(?:is|:|=|#)?\s*)\d{3,4}\b/gi;
const MAX_DEPTH = 8;

/** card_number=4111+1111+…, cvv=123 and payment_token=… in form-encoded or query text. */
const SENSITIVE_PAIR = /\b(card_?number|card_?cvv|cvv2?|cvc2?|security_?code|pan|payment_?token|wallet_?token)=[^&\s"]*/gi;

/**
 * A UUID (payment ids, request and correlation ids) is never a card number, whatever digits it has:
 * one whose first groups are all digits (`06641812-5678-4649-…`) would otherwise read as 16 digits
 * grouped with dashes, and a log line would lose the id that finds the request.
 */
const UUID = /\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b/g;

const maskPans = (text: string): string =>
  text.replace(PAN_LIKE, (m) => {
    const digits = m.replace(/%2[0fF]/g, '').replace(/\D/g, '');
    return `${digits.slice(0, 6)}******${digits.slice(-4)}`;
  });

export function redactText(text: string): string {
  const cleaned = text.replace(SENSITIVE_PAIR, '$1=[redacted]').replace(CODE_MENTION, '$1$2[redacted]');
  // Card numbers are looked for between the UUIDs, never inside one.
  let out = '';
  let at = 0;
  for (const m of cleaned.matchAll(UUID)) {
    out += maskPans(cleaned.slice(at, m.index)) + m[0];
    at = m.index + m[0].length;
  }
  return out + maskPans(cleaned.slice(at));
}

export function redact(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactText(value);
  if (typeof value === 'number' && Number.isInteger(value)) {
    // A card number parsed from JSON as a number is as sensitive as one in a string.
    const digits = String(Math.abs(value));
    const masked = redactText(digits);
    return masked === digits ? value : masked;
  }
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return '[truncated]';
  if (value instanceof Error) {
    return { name: value.name, message: redactText(value.message), ...(value.stack ? { stack: redactText(value.stack) } : {}) };
  }
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = SENSITIVE_KEYS.test(k) ? '[redacted]' : redact(v, depth + 1);
  return out;
}
