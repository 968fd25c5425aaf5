/**
 * Characters XML 1.0 cannot carry at all, not even as character references: U+0000–U+0008, U+000B, U+000C,
 * U+000E–U+001F, U+FFFE, U+FFFF and lone surrogates. Values are refused with them on input (both interfaces), so
 * every stored object has an XML form (object, CAR export).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this finds
export const NOT_XML_CHAR = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|\p{Cs}/u;

/** `U+0001`: how a refused character is named in messages. */
export const codePointText = (c: string): string =>
  `U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;

/** Why `text` cannot be stored (it holds a character XML cannot carry), or undefined. Job fields use it as objects do. */
export function unstorableText(text: string): string | undefined {
  const bad = NOT_XML_CHAR.exec(text);
  return bad ? `must not hold the control character ${codePointText(bad[0])}` : undefined;
}
