import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { el, parseXml, serializeXml, type XmlElement, type XmlLimits } from '../../../src/car/xml.ts';
import { MillraceError } from '../../../src/errors.ts';

const refused = (input: string | Buffer, status: number, message: RegExp, limits?: Partial<XmlLimits>): void => {
  assert.throws(
    () => parseXml(input, limits),
    (e: unknown) => e instanceof MillraceError && e.status === status && message.test(e.message),
  );
};

test('serializeXml writes the UTF-8 declaration, two-space indentation and <X/> for empty elements', () => {
  const doc = el('Queue', [
    el('Comment'),
    el('Name', 'Nightly'),
    el('Partition', [], { type: 'Partition', path: 'GLOBAL' }),
    el('Elements', [el('Element', [el('From', '1')])]),
  ]);
  assert.equal(
    serializeXml(doc),
    [
      '<?xml version="1.0" encoding="UTF-8"?>',
      '<Queue>',
      '  <Comment/>',
      '  <Name>Nightly</Name>',
      '  <Partition type="Partition" path="GLOBAL"/>',
      '  <Elements>',
      '    <Element>',
      '      <From>1</From>',
      '    </Element>',
      '  </Elements>',
      '</Queue>',
      '',
    ].join('\n'),
  );
});

test('markup characters, tabs, CR, LF and C1 controls survive a round trip in text and attributes', () => {
  const tricky = 'a & b < c > d "q" \'s\' ]]> \t tab \r\n crlf \r cr \n lf \u007f\u0085\u009f é 😀 \u2028';
  const doc = el('R', [el('T', tricky), el('A', [], { v: tricky, w: '  two  spaces  ' })]);
  const xml = serializeXml(doc);
  assert.ok(!xml.includes(']]>'), 'the text never holds ]]>');
  assert.deepEqual(parseXml(xml), doc);
  assert.deepEqual(parseXml(Buffer.from(xml, 'utf8')), doc);
});

test('serializeXml refuses (400) a value holding a character XML cannot carry, naming where', () => {
  for (const c of [
    '\u0000',
    '\u0001',
    '\u0008',
    '\u000b',
    '\u000c',
    '\u001f',
    '\ufffe',
    '\uffff',
    '\ud800',
    '\udc00',
  ]) {
    for (const doc of [el('R', [el('T', `x${c}y`)]), el('R', [], { a: c })]) {
      assert.throws(
        () => serializeXml(doc),
        (e: unknown) =>
          e instanceof MillraceError && e.status === 400 && /holds a character XML cannot carry/.test(e.message),
      );
    }
  }
  assert.throws(() => serializeXml(el('1bad')), /not an XML name/);
  assert.throws(() => serializeXml(el('R', [], { 'a b': 'x' })), /not an XML name/);
  assert.throws(() => serializeXml({ ...el('R', [el('T')]), text: 'mixed' }), /both text and child elements/);
});

test('an XXE DOCTYPE with SYSTEM "file:///etc/passwd" is refused before parsing (400)', () => {
  const xxe = '<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n<r>&x;</r>';
  refused(xxe, 400, /DOCTYPE and entity declarations are not accepted/);
  refused('<!doctype r SYSTEM "file:///etc/passwd"><r/>', 400, /DOCTYPE/);
  refused('<r><!ENTITY x "y"></r>', 400, /entity declarations are not accepted/);
});

test('billion laughs (10 × 10) is refused for its DOCTYPE before any expansion', () => {
  const defs = ['<!ENTITY lol0 "lol">'];
  for (let i = 1; i < 10; i++) defs.push(`<!ENTITY lol${i} "${`&lol${i - 1};`.repeat(10)}">`);
  const bomb = `<?xml version="1.0"?>\n<!DOCTYPE lolz [${defs.join('')}]>\n<lolz>&lol9;</lolz>`;
  refused(bomb, 400, /DOCTYPE/);
});

test('a 10 KB entity referenced 10,000 times is refused for its DOCTYPE before any expansion', () => {
  const body = `<!DOCTYPE r [<!ENTITY big "${'x'.repeat(10_240)}">]><r>${'&big;'.repeat(10_000)}</r>`;
  refused(body, 400, /DOCTYPE/);
});

test('1e6 character references (&#65;) exceed the default size cap: 413; with a larger cap they parse', () => {
  const body = `<r>${'&#65;'.repeat(1_000_000)}</r>`;
  refused(body, 413, /larger than 1048576 bytes/);
  refused(Buffer.from(body), 413, /larger than/);
  assert.equal(parseXml(body, { maxBytes: 10_000_000 }).text, 'A'.repeat(1_000_000));
});

test('100,000 nested elements give a 400, not a stack overflow; element count is capped', () => {
  const deep = `${'<a>'.repeat(100_000)}${'</a>'.repeat(100_000)}`;
  refused(deep, 400, /deeper than 64 levels/);
  assert.equal(parseXml(`${'<a>'.repeat(64)}${'</a>'.repeat(64)}`).name, 'a');
  refused(`<r>${'<a/>'.repeat(11)}</r>`, 400, /more than 10 elements/, { maxElements: 10 });
});

test('only UTF-8 is accepted: UTF-16 with or without BOM, bad UTF-8 and other declared encodings give 400', () => {
  const doc = '<?xml version="1.0"?><r>x</r>';
  refused(Buffer.from(doc, 'utf16le'), 400, /not UTF-8.*UTF-16/);
  refused(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(doc, 'utf16le')]), 400, /byte order mark/);
  refused(Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(doc, 'utf16le').swap16()]), 400, /byte order mark/);
  refused(Buffer.from([0x3c, 0x72, 0x3e, 0xc3, 0x28, 0x3c, 0x2f, 0x72, 0x3e]), 400, /not valid UTF-8/);
  refused('<?xml version="1.0" encoding="ISO-8859-1"?><r/>', 400, /encoding "ISO-8859-1"; only UTF-8/);
  refused(Buffer.from("<?xml version='1.0' encoding='UTF-16'?><r/>"), 400, /only UTF-8/);
  assert.equal(parseXml('<?xml version="1.0" encoding="utf-8" standalone="yes"?><r>é</r>').text, 'é');
  assert.equal(parseXml(Buffer.from('\ufeff<r>é</r>', 'utf8')).text, 'é');
});

test('malformed XML gives 400 with line and column', () => {
  const cases: Array<[string, RegExp]> = [
    ['<r>\n  <a></b>\n</r>', /line 2, column 6: <\/b> does not close <a>/],
    ['<r><a></a>', /line 1, column 11: element <r> is not closed/],
    ['<r/><s/>', /a second root element/],
    ['<r/>text', /text outside the root element/],
    ['', /no root element/],
    ['<r a=1/>', /must be quoted/],
    ['<r a="1"b="2"/>', /expected whitespace/],
    ['<r a="1" a="2"/>', /given twice/],
    ['<r a="<"/>', /"<" in the value/],
    ['<r>&nbsp;</r>', /line 1, column 4: unknown entity/],
    ['<r>a & b</r>', /bare "&"/],
    ['<r>&#0;</r>', /cannot carry/],
    ['<r>]]></r>', /"]]>" is not allowed/],
    ['<r><!-- open </r>', /comment is not closed/],
    ['<r>\u0001</r>', /U\+0001 is not a character XML allows/],
    ['<r/>\n<?php echo 1; ?>', /line 2, column 1: processing instructions are not accepted/],
    ['<r><?xml version="1.0"?></r>', /processing instructions/],
    ['<?xml-stylesheet href="x"?><r/>', /processing instructions/],
    ['<?xml version="2.0"?><r/>', /malformed XML declaration/],
    ['<r><![INCLUDE[x]]></r>', /markup declarations are not accepted/],
    ['<1r/>', /expected an element name/],
    ['</r>', /closes no element/],
  ];
  for (const [xml, message] of cases) refused(xml, 400, message);
});

test('whitespace inside text is kept exactly; whitespace between child elements is ignored', () => {
  const doc = parseXml('<r>\n  <a>  two  spaces\n\tand a tab  </a>\n  <b>   </b>\n  <c/>\r\n  <d>x\r\ny\rz</d>\n</r>');
  assert.equal(doc.text, '');
  assert.deepEqual(
    doc.children.map((c) => c.text),
    ['  two  spaces\n\tand a tab  ', '   ', '', 'x\ny\nz'],
  );
});

test('comments are dropped, CDATA becomes text, attributes are normalised as XML 1.0 says', () => {
  const doc = parseXml('<!-- before --><r a="x\ty\nz&#9;&#10;"><!-- in --><t>a<![CDATA[<&>]]>b</t></r><!-- after -->');
  assert.deepEqual(doc, el('r', [el('t', 'a<&>b')], { a: 'x y z\t\n' }));
  assert.deepEqual(
    parseXml('<r __proto__="p" constructor="c"/>').attributes,
    Object.fromEntries([
      ['__proto__', 'p'],
      ['constructor', 'c'],
    ]),
  );
});

/** True when every character is one XML 1.0 can carry (the test must not generate the others). */
const xmlLegal = (s: string): boolean =>
  [...s].every((ch) => {
    const n = ch.codePointAt(0) ?? 0;
    return (
      n === 9 || n === 10 || n === 13 || (n >= 0x20 && n <= 0xd7ff) || (n >= 0xe000 && n <= 0xfffd) || n >= 0x10000
    );
  });
const xmlChar = fc
  .oneof(
    { weight: 4, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
    fc.constantFrom(' ', '\t', '\n', '\r', '&', '<', '>', '"', "'", ']]>', '&amp;', '\u0085'),
  )
  .map((c) => (xmlLegal(c) ? c : '?'));
const xmlText = fc.string({ unit: xmlChar, maxLength: 20 });
const xmlName = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_.-]{0,8}$/);
const attributes = fc.dictionary(xmlName, xmlText, { maxKeys: 3, noNullPrototype: true });
// An element holds text or child elements, never both (mixed content has no form in this layer).
const tree = fc.letrec<{ node: XmlElement }>((tie) => ({
  node: fc.oneof(
    { maxDepth: 5, depthIdentifier: 'tree' },
    fc.record(
      { name: xmlName, attributes, children: fc.constant<XmlElement[]>([]), text: xmlText },
      { noNullPrototype: true },
    ),
    fc.record(
      {
        name: xmlName,
        attributes,
        children: fc.array(tie('node'), { minLength: 1, maxLength: 3 }),
        text: fc.constant(''),
      },
      { noNullPrototype: true },
    ),
  ),
}));

test('property: serializeXml then parseXml gives back the same tree', () => {
  fc.assert(
    fc.property(tree.node, (doc) => {
      assert.deepEqual(parseXml(serializeXml(doc)), doc);
    }),
    { numRuns: 300 },
  );
});
