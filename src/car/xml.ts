/**
 * A small XML layer for the XML interface and CAR entries, written to be safe against hostile input (docs/architecture.md §10).
 *
 * parseXml is our own single-pass, iterative parser rather than a general-purpose library, so that every safety
 * rule is enforced in one place and cannot be switched off by a parser option:
 * - the size cap is checked before anything else is looked at (413);
 * - only UTF-8 is accepted (a UTF-16/32 body, invalid UTF-8 or a declaration naming another encoding: 400);
 * - any `<!DOCTYPE` or `<!ENTITY` is refused by a plain text scan before parsing, so no DTD, no external entity
 *   (XXE) and no entity expansion (billion laughs) can ever happen;
 * - only the five predefined entities and numeric character references are decoded;
 * - nesting depth and element count are capped, and the parser keeps its own stack, so a deeply nested body gives
 *   a quick 400 instead of a stack overflow;
 * - processing instructions other than the leading `<?xml …?>` are refused.
 * The document model is deliberately small: element name, attributes, child elements and text. Comments are
 * dropped, CDATA becomes text. Whitespace-only text between child elements is ignored; any other text is kept
 * exactly (line ends are normalised to \n, as XML 1.0 requires of every parser).
 */
import { codePointText, NOT_XML_CHAR } from '../domain/characters.ts';
import { invalid, tooLarge } from '../errors.ts';
import { itemAt } from '../domain/item-at.ts';

export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  text: string;
}

export interface XmlLimits {
  maxBytes: number;
  maxDepth: number;
  maxElements: number;
}

export const XML_LIMITS: XmlLimits = Object.freeze({ maxBytes: 1024 * 1024, maxDepth: 64, maxElements: 200_000 });

// XML 1.0 (5th edition) Name production.
const NAME_START =
  'A-Z_a-z:\\u00C0-\\u00D6\\u00D8-\\u00F6\\u00F8-\\u02FF\\u0370-\\u037D\\u037F-\\u1FFF\\u200C\\u200D\\u2070-\\u218F\\u2C00-\\u2FEF\\u3001-\\uD7FF\\uF900-\\uFDCF\\uFDF0-\\uFFFD\\u{10000}-\\u{EFFFF}';
const NAME_REST = `${NAME_START}\\-.0-9\\u00B7\\u0300-\\u036F\\u203F\\u2040`;
const NAME_AT = new RegExp(`[${NAME_START}][${NAME_REST}]*`, 'uy');
const WHOLE_NAME = new RegExp(`^[${NAME_START}][${NAME_REST}]*$`, 'u');
const BLANK = /^[ \t\n\r]*$/;
const WS_AT = /[ \t\n\r]*/y;
const DECLARATION =
  /^[ \t\n]+version[ \t\n]*=[ \t\n]*(["'])1\.[0-9]+\1(?:[ \t\n]+encoding[ \t\n]*=[ \t\n]*(["'])([A-Za-z][A-Za-z0-9._-]*)\2)?(?:[ \t\n]+standalone[ \t\n]*=[ \t\n]*(["'])(?:yes|no)\4)?[ \t\n]*$/;
const REFERENCE = /&(?:#([0-9]{1,7})|#x([0-9A-Fa-f]{1,6})|(lt|gt|amp|quot|apos));/y;
const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Input → text: size cap first, then UTF-8 only. */
function decode(input: string | Buffer, maxBytes: number): string {
  const tooBig = (): never => {
    throw tooLarge(`The XML body is larger than ${maxBytes} bytes`);
  };
  if (typeof input === 'string') {
    // length ≤ byte length, so the cheap test settles most oversized strings without a scan.
    if (input.length > maxBytes || Buffer.byteLength(input, 'utf8') > maxBytes) tooBig();
    return input.charCodeAt(0) === 0xfeff ? input.slice(1) : input;
  }
  if (input.length > maxBytes) tooBig();
  const notUtf8 = (why: string): never => {
    throw invalid(`The XML body is not UTF-8 (${why}); only UTF-8 is accepted`);
  };
  if ((input[0] === 0xfe && input[1] === 0xff) || (input[0] === 0xff && input[1] === 0xfe))
    notUtf8('it starts with a UTF-16 byte order mark');
  // '<' encoded as UTF-16 or UTF-32 without a byte order mark puts NUL bytes among the first four.
  if (input.subarray(0, 4).includes(0)) notUtf8('it looks like UTF-16 or UTF-32');
  const start = input[0] === 0xef && input[1] === 0xbb && input[2] === 0xbf ? 3 : 0;
  try {
    return utf8.decode(input.subarray(start));
  } catch {
    return notUtf8('it holds a byte sequence that is not valid UTF-8');
  }
}

const isXmlCodePoint = (n: number): boolean =>
  n === 0x9 ||
  n === 0xa ||
  n === 0xd ||
  (n >= 0x20 && n <= 0xd7ff) ||
  (n >= 0xe000 && n <= 0xfffd) ||
  (n >= 0x10000 && n <= 0x10ffff);

interface Frame {
  el: XmlElement;
  text: string[];
}

/** One pass over the text with an explicit element stack; `fail` reports line and column of an offset. */
class Parser {
  private pos = 0;
  private readonly stack: Frame[] = [];
  private root: XmlElement | undefined;
  private elements = 0;
  private readonly src: string;
  private readonly limits: XmlLimits;

  constructor(src: string, limits: XmlLimits) {
    this.src = src;
    this.limits = limits;
  }

  fail(at: number, message: string): never {
    let line = 1;
    let lineStart = 0;
    for (let i = this.src.indexOf('\n'); i >= 0 && i < at; i = this.src.indexOf('\n', i + 1)) {
      line++;
      lineStart = i + 1;
    }
    throw invalid(`Malformed XML at line ${line}, column ${at - lineStart + 1}: ${message}`);
  }

  parse(): XmlElement {
    const src = this.src;
    if (src.startsWith('<?xml') && /[ \t\n?]/.test(src.charAt(5))) this.declaration();
    while (this.pos < src.length) {
      const lt = src.indexOf('<', this.pos);
      const end = lt < 0 ? src.length : lt;
      if (end > this.pos) this.characters(this.pos, end);
      if (lt < 0) break;
      this.pos = lt;
      if (src.startsWith('<!--', lt)) this.comment();
      else if (src.startsWith('<![CDATA[', lt)) this.cdata();
      else if (src.startsWith('<?', lt)) this.fail(lt, 'processing instructions are not accepted');
      else if (src.startsWith('<!', lt)) this.fail(lt, 'markup declarations are not accepted');
      else if (src.startsWith('</', lt)) this.endTag();
      else this.startTag();
    }
    const open = this.stack.at(-1);
    if (open) this.fail(src.length, `element <${open.el.name}> is not closed`);
    if (!this.root) this.fail(src.length, 'the document has no root element');
    return this.root;
  }

  private declaration(): void {
    const close = this.src.indexOf('?>');
    if (close < 0) this.fail(0, 'the XML declaration is not closed');
    const m = DECLARATION.exec(this.src.slice(5, close));
    if (!m) this.fail(0, 'malformed XML declaration');
    const encoding = m[3];
    if (encoding !== undefined && encoding.toUpperCase() !== 'UTF-8')
      throw invalid(`The XML declaration names encoding "${encoding}"; only UTF-8 is accepted`);
    this.pos = close + 2;
  }

  private comment(): void {
    const close = this.src.indexOf('-->', this.pos + 4);
    if (close < 0) this.fail(this.pos, 'the comment is not closed');
    this.pos = close + 3;
  }

  private cdata(): void {
    const top = this.stack.at(-1);
    if (!top) this.fail(this.pos, 'CDATA outside the root element');
    const close = this.src.indexOf(']]>', this.pos + 9);
    if (close < 0) this.fail(this.pos, 'the CDATA section is not closed');
    top.text.push(this.src.slice(this.pos + 9, close));
    this.pos = close + 3;
  }

  private characters(from: number, to: number): void {
    const raw = this.src.slice(from, to);
    const top = this.stack.at(-1);
    if (!top) {
      if (!BLANK.test(raw)) this.fail(from, 'text outside the root element');
      return;
    }
    const bad = raw.indexOf(']]>');
    if (bad >= 0) this.fail(from + bad, '"]]>" is not allowed in text');
    top.text.push(this.references(raw, from));
  }

  /** Decodes the predefined entities and character references; nothing else expands. */
  private references(raw: string, offset: number): string {
    let amp = raw.indexOf('&');
    if (amp < 0) return raw;
    const parts: string[] = [];
    let from = 0;
    while (amp >= 0) {
      parts.push(raw.slice(from, amp));
      REFERENCE.lastIndex = amp;
      const m = REFERENCE.exec(raw);
      if (!m)
        this.fail(
          offset + amp,
          'unknown entity or bare "&" (only &lt; &gt; &amp; &quot; &apos; and &#…; are accepted)',
        );
      if (m[3] !== undefined) parts.push(PREDEFINED[m[3]] as string);
      else {
        const n = m[1] !== undefined ? Number.parseInt(m[1], 10) : Number.parseInt(itemAt(m, 2), 16);
        if (!isXmlCodePoint(n))
          this.fail(offset + amp, `character reference ${m[0]} names a character XML cannot carry`);
        parts.push(String.fromCodePoint(n));
      }
      from = REFERENCE.lastIndex;
      amp = raw.indexOf('&', from);
    }
    parts.push(raw.slice(from));
    return parts.join('');
  }

  private name(what: string): string {
    NAME_AT.lastIndex = this.pos;
    const m = NAME_AT.exec(this.src);
    if (!m) this.fail(this.pos, `expected ${what}`);
    this.pos = NAME_AT.lastIndex;
    return m[0];
  }

  private whitespace(): boolean {
    WS_AT.lastIndex = this.pos;
    WS_AT.exec(this.src);
    const skipped = WS_AT.lastIndex > this.pos;
    this.pos = WS_AT.lastIndex;
    return skipped;
  }

  private startTag(): void {
    const at = this.pos;
    this.pos++;
    const name = this.name('an element name after "<"');
    const attributes = new Map<string, string>();
    let selfClosing = false;
    for (;;) {
      const spaced = this.whitespace();
      if (this.src.startsWith('>', this.pos)) {
        this.pos++;
        break;
      }
      if (this.src.startsWith('/>', this.pos)) {
        this.pos += 2;
        selfClosing = true;
        break;
      }
      if (this.pos >= this.src.length) this.fail(at, `the start tag <${name}> is not closed`);
      if (!spaced) this.fail(this.pos, 'expected whitespace, ">" or "/>"');
      const attrAt = this.pos;
      const attr = this.name('an attribute name, ">" or "/>"');
      this.whitespace();
      if (this.src.charAt(this.pos) !== '=') this.fail(this.pos, `expected "=" after attribute ${attr}`);
      this.pos++;
      this.whitespace();
      const quote = this.src.charAt(this.pos);
      if (quote !== '"' && quote !== "'") this.fail(this.pos, `the value of attribute ${attr} must be quoted`);
      const close = this.src.indexOf(quote, this.pos + 1);
      if (close < 0) this.fail(this.pos, `the value of attribute ${attr} is not closed`);
      const raw = this.src.slice(this.pos + 1, close);
      const lt = raw.indexOf('<');
      if (lt >= 0) this.fail(this.pos + 1 + lt, `"<" in the value of attribute ${attr}`);
      if (attributes.has(attr)) this.fail(attrAt, `attribute ${attr} is given twice`);
      // Attribute-value normalisation (XML 1.0 §3.3.3): literal white space becomes a space; references do not.
      attributes.set(attr, this.references(raw.replace(/[\t\n]/g, ' '), this.pos + 1));
      this.pos = close + 1;
    }
    if (++this.elements > this.limits.maxElements)
      throw invalid(`The XML document holds more than ${this.limits.maxElements} elements`);
    if (this.stack.length + 1 > this.limits.maxDepth)
      throw invalid(`The XML document nests elements deeper than ${this.limits.maxDepth} levels`);
    // Object.fromEntries defines own properties, so an attribute named __proto__ stays an ordinary attribute.
    const el: XmlElement = { name, attributes: Object.fromEntries(attributes), children: [], text: '' };
    const parent = this.stack.at(-1);
    if (parent) parent.el.children.push(el);
    else if (this.root) this.fail(at, 'a second root element');
    else this.root = el;
    if (!selfClosing) this.stack.push({ el, text: [] });
  }

  private endTag(): void {
    const at = this.pos;
    this.pos += 2;
    const name = this.name('an element name after "</"');
    this.whitespace();
    if (this.src.charAt(this.pos) !== '>') this.fail(this.pos, `expected ">" to end </${name}>`);
    this.pos++;
    const top = this.stack.pop();
    if (!top) this.fail(at, `</${name}> closes no element`);
    if (top.el.name !== name) this.fail(at, `</${name}> does not close <${top.el.name}>`);
    const text = top.text.join('');
    top.el.text = top.el.children.length > 0 && BLANK.test(text) ? '' : text;
  }
}

/**
 * Parses one XML document. Throws MillraceError: 413 when bigger than maxBytes; 400 for DOCTYPE/entity
 * declarations (refused before parsing), malformed XML (with line and column), too deep or too many elements,
 * text that is not UTF-8, and processing instructions other than the leading <?xml?>.
 */
export function parseXml(input: string | Buffer, limits: Partial<XmlLimits> = {}): XmlElement {
  // Field by field, so that an explicit `undefined` can never switch a cap off.
  const lim: XmlLimits = {
    maxBytes: limits.maxBytes ?? XML_LIMITS.maxBytes,
    maxDepth: limits.maxDepth ?? XML_LIMITS.maxDepth,
    maxElements: limits.maxElements ?? XML_LIMITS.maxElements,
  };
  const decoded = decode(input, lim.maxBytes);
  // Refused by a text scan, before any parsing: no DTD means no entity can ever be declared or expanded.
  if (/<!\s*(?:DOCTYPE|ENTITY)/i.test(decoded))
    throw invalid('DOCTYPE and entity declarations are not accepted in XML bodies');
  const bad = NOT_XML_CHAR.exec(decoded);
  const normalised = decoded.replace(/\r\n?/g, '\n');
  const parser = new Parser(normalised, lim);
  if (bad) {
    const at = decoded.slice(0, bad.index).replace(/\r\n?/g, '\n').length;
    parser.fail(at, `${codePointText(bad[0])} is not a character XML allows`);
  }
  return parser.parse();
}

// Serialising. `>` is always escaped so that "]]>" never appears; CR, TAB and the C1 controls are written as
// character references so that they survive parsing (a parser turns a literal CR into LF); in attributes LF too.
const TEXT_ESCAPES = /[&<>\r\t\u007F-\u009F]/g;
const ATTRIBUTE_ESCAPES = /[&<>"\r\n\t\u007F-\u009F]/g;
const NAMED: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
const escapeChar = (c: string): string => NAMED[c] ?? `&#${c.charCodeAt(0)};`;

/**
 * Throws 400 when a value holds a character XML 1.0 cannot carry at all (U+0000–U+0008, U+000B, U+000C,
 * U+000E–U+001F, U+FFFE, U+FFFF, a lone surrogate): such a value has no XML form, not even as a reference.
 */
function checkChars(value: string, where: string): void {
  const bad = NOT_XML_CHAR.exec(value);
  if (bad) throw invalid(`The value of ${where} holds a character XML cannot carry (${codePointText(bad[0])})`);
}

function checkName(name: string, where: string): void {
  if (!WHOLE_NAME.test(name)) throw invalid(`${where} "${name.slice(0, 80)}" is not an XML name`);
}

/** A text value as serializeXml writes it: 400 for a character XML cannot carry, else escaped. */
export function escapeXmlText(text: string, path: string): string {
  checkChars(text, path);
  return text.replace(TEXT_ESCAPES, escapeChar);
}

/**
 * An element's start tag without its closing `>` or `/>`, as serializeXml writes it: for writers that produce a
 * document piece by piece and must give exactly serializeXml's bytes.
 */
export function startTagXml(name: string, attributes: Record<string, string>, path: string): string {
  checkName(name, 'The element name');
  return openTag({ name, attributes, children: [], text: '' }, path);
}

function openTag(el: XmlElement, path: string): string {
  let out = `<${el.name}`;
  for (const [k, v] of Object.entries(el.attributes)) {
    checkName(k, `An attribute name of ${path}`);
    checkChars(v, `${path}/@${k}`);
    out += ` ${k}="${v.replace(ATTRIBUTE_ESCAPES, escapeChar)}"`;
  }
  return out;
}

/**
 * Serialises with the UTF-8 declaration, two-space indentation and `<X/>` for empty elements. Deterministic:
 * attributes in insertion order. An element holds either text or child elements (white space aside): mixed
 * content has no form here and gives 400, as does a value holding a character XML cannot carry.
 */
export function serializeXml(root: XmlElement): string {
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>\n'];
  // An explicit stack, like the parser: the depth of a tree never limits what can be written.
  const stack: Array<{ el: XmlElement; depth: number; path: string; close: boolean }> = [
    { el: root, depth: 0, path: root.name, close: false },
  ];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const { el, depth, path } = item;
    const indent = '  '.repeat(depth);
    if (item.close) {
      out.push(`${indent}</${el.name}>\n`);
      continue;
    }
    checkName(el.name, 'The element name');
    const open = indent + openTag(el, path);
    if (el.children.length === 0) {
      const text = escapeXmlText(el.text, path);
      out.push(text === '' ? `${open}/>\n` : `${open}>${text}</${el.name}>\n`);
      continue;
    }
    if (!BLANK.test(el.text)) throw invalid(`The element ${path} holds both text and child elements`);
    out.push(`${open}>\n`);
    stack.push({ el, depth, path, close: true });
    for (let i = el.children.length - 1; i >= 0; i--) {
      const child = itemAt(el.children, i);
      stack.push({ el: child, depth: depth + 1, path: `${path}/${child.name}`, close: false });
    }
  }
  return out.join('');
}

/** Builds an element: `children` is either the child elements or the element's text. */
export function el(
  name: string,
  children: XmlElement[] | string = [],
  attributes: Record<string, string> = {},
): XmlElement {
  return typeof children === 'string'
    ? { name, attributes, children: [], text: children }
    : { name, attributes, children, text: '' };
}
