import { el, serializeXml, type XmlElement } from '../../car/xml.ts';
import type { XmlRoute } from './routes.ts';
import { itemAt } from '../../domain/item-at.ts';

/**
 * capabilitiesxml: a WADL document made from the route table the interface is served from, so it
 * always lists exactly what is served. Path parameters `:name` become WADL templates `{name}`.
 */
export function wadl(base: string, routes: readonly XmlRoute[]): string {
  const resources = routes.map((r) => {
    const templates = [...r.path.matchAll(/:(\w+)/g)].map((m) =>
      el('param', [], { name: itemAt(m, 1), style: 'template', type: 'xsd:string', required: 'true' }),
    );
    const methods = r.methods.map((method) => {
      const request: XmlElement[] = [
        ...(r.query ?? []).map((q) =>
          el('param', [el('doc', q.doc), ...(q.options ?? []).map((o) => el('option', [], { value: o }))], {
            name: q.name,
            style: 'query',
            type: 'xsd:string',
          }),
        ),
        ...(r.headers ?? []).map((h) =>
          el('param', [el('doc', h.doc)], {
            name: h.name,
            style: 'header',
            type: 'xsd:string',
            ...(h.default ? { default: h.default } : {}),
          }),
        ),
      ];
      return el(
        'method',
        [
          el('doc', r.doc),
          ...(request.length > 0 ? [el('request', request)] : []),
          el('response', [el('representation', [], { mediaType: r.produces })], { status: '200' }),
        ],
        { name: method, id: r.methods.length > 1 ? `${r.id}-${method.toLowerCase()}` : r.id },
      );
    });
    return el('resource', [...templates, ...methods], { path: r.path.slice(1).replace(/:(\w+)/g, '{$1}') });
  });
  return serializeXml(
    el(
      'application',
      [
        el('doc', 'Millrace api-rest interface (basic authentication)'),
        el('resources', resources, { base: `${base}/` }),
      ],
      {
        xmlns: 'http://wadl.dev.java.net/2009/02',
        'xmlns:xsd': 'http://www.w3.org/2001/XMLSchema',
      },
    ),
  );
}
