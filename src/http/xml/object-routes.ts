// The XML interface's routes for one object: read it as XML or as a CAR file, and store one from its XML
// (docs/architecture.md §2; the object XML is described there too).
import { Readable } from 'node:stream';
import { elementToBody, typeOfElement } from '../../car/object-xml.ts';
import { parseXml } from '../../car/xml.ts';
import { invalid } from '../../errors.ts';
import { authorizeStore } from '../../services/objects.ts';
import { objectMessage, XML_TYPE } from './documents.ts';
import { definitionType, flag, params, query, restObjectMaker, xmlBody } from './request-reading.ts';
import { XML_BODY_LIMIT, type XmlInterfaceDeps, type XmlRoute } from './route-types.ts';

/** object and car: one object as XML, or as a CAR file with what it refers to. */
export function objectReadRoutes(deps: XmlInterfaceDeps): XmlRoute[] {
  return [
    {
      id: 'object',
      methods: ['GET'],
      path: '/object/:type/:key',
      produces: 'text/xml',
      doc: 'An object as XML: /object/<object_type>/<partition>.<object_name>.',
      async handler(req, reply) {
        const type = definitionType(params(req).type ?? '');
        return reply.type(XML_TYPE).send(await deps.objects.getXml(req.principal, type, params(req).key ?? ''));
      },
    },
    {
      id: 'car',
      methods: ['GET'],
      path: '/car/:type/:key',
      produces: 'application/zip',
      doc: 'An object as a CAR file; references=true adds every object it refers to.',
      query: [{ name: 'references', doc: 'also export the objects it refers to', options: ['true', 'false'] }],
      async handler(req, reply) {
        const type = definitionType(params(req).type ?? '');
        const key = params(req).key ?? '';
        const references = flag(query(req).references, 'references', false);
        const car = await deps.exporter.exportStream(req.principal, [{ type: type.name, key }], { references });
        const file = `${type.name}_${key}.car`.replace(/[^A-Za-z0-9_.-]/g, '_');
        return reply
          .type('application/zip')
          .header('Content-Disposition', `attachment; filename="${file}"`)
          .send(Readable.from(car));
      },
    },
  ];
}

/** xml-put: creates or changes the object whose XML is the body. */
export function objectStoreRoute(deps: XmlInterfaceDeps): XmlRoute {
  const restObject = restObjectMaker(deps.xmlBase);
  return {
    id: 'xml-put',
    methods: ['PUT'],
    path: '/xml',
    produces: 'text/xml',
    doc: 'Creates or changes the object whose XML is the body.',
    bodyLimit: XML_BODY_LIMIT,
    authorize: (req) => authorizeStore(req.principal),
    async handler(req, reply) {
      const root = parseXml(xmlBody(req));
      const type = typeOfElement(root);
      if (type.storage !== 'definition') throw invalid(`A ${type.name} cannot be stored with xml-put`);
      const body = elementToBody(type, root);
      const key = keyOf(type.key, body);
      if (!key) throw invalid(`The XML must name the ${type.name}: ${type.identity.join(' and ')}`);
      const { saved, created } = await deps.objects.put(req.principal, type, key, body);
      const savedKey = String(saved.businessKey).slice(type.name.length + 1);
      return reply
        .code(created ? 201 : 200)
        .type(XML_TYPE)
        .send(objectMessage(restObject(type.name, savedKey, saved.Description)));
    },
  };
}

/** The key an object body names by its identity fields. */
function keyOf(shape: string, body: Record<string, unknown>): string | undefined {
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  if (shape === 'name') return text(body.Name);
  if (shape === 'partitioned') return text(body.Name) && `${text(body.Partition) ?? 'GLOBAL'}.${text(body.Name)}`;
  if (shape === 'queueProvider')
    return text(body.ProcessServer) && text(body.Queue) && `${text(body.ProcessServer)}.${text(body.Queue)}`;
  return undefined;
}
