import { el, serializeXml, type XmlElement } from '../../car/xml.ts';

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

/** `list` and `scripts-list`; with a stylesheet, an xml-stylesheet instruction follows the declaration. */
export function restList(type: string, objects: readonly RestObject[], stylesheet?: string): string {
  const xml = serializeXml(el('rest-list', objects.map(restObject), { type, count: String(objects.length) }));
  if (!stylesheet) return xml;
  const cut = xml.indexOf('?>') + 2;
  return `${xml.slice(0, cut)}\n<?xml-stylesheet type="text/xsl" href="${stylesheet.replace(/[&"<>]/g, '')}"?>${xml.slice(cut)}`;
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
