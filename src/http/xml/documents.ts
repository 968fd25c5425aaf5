import { el, escapeXmlText, serializeXml, startTagXml, type XmlElement } from '../../car/xml.ts';

/**
 * The XML documents the api-rest interface answers with (docs/architecture.md §9, §13): errors, `message` replies of the put
 * services, and `rest-list`. Built as element trees and serialised by one serialiser, so escaping is never
 * hand-written.
 */

export const XML_TYPE = 'text/xml; charset=utf-8';

export const errorDocument = (code: number, message: string): string =>
  serializeXml(el('error', [el('code', String(code)), el('message', message)]));

export interface RestObject {
  businessKey: string;
  url: string;
  description: string | null;
}

const restObject = (o: RestObject): XmlElement =>
  el('rest-object', [el('business-key', o.businessKey), el('url', o.url), el('description', o.description ?? '')]);

const options = (): XmlElement => el('message-options', [el('persist', 'N')]);

/** xml-put's answer. */
export const objectMessage = (o: RestObject): string => serializeXml(el('message', [options(), restObject(o)]));

/** car-put's and jar-put's answer: the import job and its status. */
export const importMessage = (jobId: number, status: string): string =>
  serializeXml(el('message', [options(), el('rest-import-job', [el('job-id', String(jobId)), el('status', status)])]));

const stylesheetInstruction = (href: string): string =>
  `<?xml-stylesheet type="text/xsl" href="${href.replace(/[&"<>]/g, '')}"?>`;

/** `list` and `scripts-list`; with a stylesheet, an xml-stylesheet instruction follows the declaration. */
export function restList(type: string, objects: readonly RestObject[], stylesheet?: string): string {
  const xml = serializeXml(el('rest-list', objects.map(restObject), { type, count: String(objects.length) }));
  if (!stylesheet) return xml;
  const cut = xml.indexOf('?>') + 2;
  return `${xml.slice(0, cut)}\n${stylesheetInstruction(stylesheet)}${xml.slice(cut)}`;
}

const restObjectLeaf = (name: string, text: string): string => {
  const escaped = escapeXmlText(text, `rest-list/rest-object/${name}`);
  return escaped === '' ? `    <${name}/>\n` : `    <${name}>${escaped}</${name}>\n`;
};

/**
 * restList's bytes exactly, written an object at a time without an element tree (the `list` of 10,000 objects
 * spent most of its time building and serialising one). The root's count attribute comes before the objects, so
 * the document can only be put together once every object is known: `add` keeps each object's text (~250 bytes),
 * and `text` puts the head before them. Two passes (count, then write) would not hold them, but the count could
 * then disagree with the objects listed when one is added or removed in between.
 */
export class RestListText {
  private readonly parts: string[] = [];

  get count(): number {
    return this.parts.length;
  }

  add(o: RestObject): void {
    this.parts.push(
      `  <rest-object>\n${restObjectLeaf('business-key', o.businessKey)}${restObjectLeaf('url', o.url)}${restObjectLeaf('description', o.description ?? '')}  </rest-object>\n`,
    );
  }

  text(type: string, stylesheet?: string): string {
    const declaration = '<?xml version="1.0" encoding="UTF-8"?>\n';
    const instruction = stylesheet ? `${stylesheetInstruction(stylesheet)}\n` : '';
    const head = declaration + instruction + startTagXml('rest-list', { type, count: String(this.count) }, 'rest-list');
    return this.count === 0 ? `${head}/>\n` : `${head}>\n${this.parts.join('')}</rest-list>\n`;
  }
}

/** The partition's default REST stylesheet (list?stylesheet=true): shows a list as an HTML table in a browser. */
export const LIST_STYLESHEET = `<?xml version="1.0" encoding="UTF-8"?>
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:output method="html" encoding="UTF-8"/>
  <xsl:template match="/rest-list">
    <html>
      <head><title><xsl:value-of select="@type"/> (<xsl:value-of select="@count"/>)</title></head>
      <body>
        <h1><xsl:value-of select="@type"/> (<xsl:value-of select="@count"/>)</h1>
        <table border="1">
          <tr><th>Business key</th><th>Description</th></tr>
          <xsl:for-each select="rest-object">
            <tr>
              <td><a href="{url}"><xsl:value-of select="business-key"/></a></td>
              <td><xsl:value-of select="description"/></td>
            </tr>
          </xsl:for-each>
        </table>
      </body>
    </html>
  </xsl:template>
</xsl:stylesheet>
`;
