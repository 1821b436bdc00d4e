/** Escapes text for HTML element content and double-quoted attribute values. */
export function esc(value: unknown): string {
  return String(value ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

const SCRIPT_UNSAFE: Readonly<Record<string, string>> = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029' };

/**
 * JSON safe to embed in HTML, inside a `<script>` element (as a JavaScript literal, or as the data
 * of a `type="application/json"` one): no `<`, `>` or `&` can close the element or start a comment,
 * and the line separators U+2028/U+2029 cannot end a string literal in older engines. Parsing it
 * gives back exactly `value`.
 */
export const jsonForScript = (value: unknown): string => JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => SCRIPT_UNSAFE[c]!);
