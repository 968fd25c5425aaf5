import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type RestObject, RestListText, restList } from '../../../src/http/xml/documents.ts';

// RestListText writes the XML `list` without an element tree; its bytes must be exactly restList's (the tree
// serialised), which the answer was before.
const objects: RestObject[] = [
  {
    businessKey: 'JobDefinition:GLOBAL.A',
    url: 'http://h/millrace/api-rest/object/JobDefinition/GLOBAL.A',
    description: 'plain',
  },
  {
    businessKey: 'JobDefinition:GLOBAL.B',
    url: 'http://h/x?a=1&b=2',
    description: 'a & b <c> "d" > é 😀\ttab\r\nCR \u0085',
  },
  { businessKey: 'JobDefinition:GLOBAL.C', url: 'http://h/c', description: '' },
  { businessKey: 'JobDefinition:GLOBAL.D', url: 'http://h/d', description: null },
];

const written = (type: string, list: readonly RestObject[], stylesheet?: string): string => {
  const text = new RestListText();
  for (const o of list) text.add(o);
  return text.text(type, stylesheet);
};

test('RestListText gives restList’s bytes: objects, none, with and without a stylesheet', () => {
  for (const list of [objects, objects.slice(0, 1), []])
    for (const stylesheet of [undefined, 'http://h/millrace/api-rest/stylesheet', 'http://h/"<&>'])
      assert.equal(written('JobDefinition', list, stylesheet), restList('JobDefinition', list, stylesheet));
});

test('RestListText refuses (400) a value XML cannot carry, naming where, as restList does', () => {
  const bad = [{ businessKey: 'Queue:GLOBAL.Q', url: 'http://h/q', description: 'bell \u0007' }];
  assert.throws(() => restList('Queue', bad), /rest-list\/rest-object\/description/);
  assert.throws(() => written('Queue', bad), /rest-list\/rest-object\/description/);
});
