// The XML interface's lists of objects: the objects of a type the caller may view (filtered, cached per caller)
// and the stylesheet such a list may refer to; the libraries and scripts, listed or as one CAR file
// (docs/architecture.md §2).
import { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { invalid } from '../../errors.ts';
import { loopYielder } from '../../loop-yield.ts';
import { LIST_STYLESHEET, RestListText, restList, XML_TYPE } from './documents.ts';
import { definitionType, flag, params, query, restObjectMaker } from './request-reading.ts';
import type { XmlInterfaceDeps, XmlRoute } from './route-types.ts';

/** list and stylesheet, in the order of the interface's table. */
export function listRoutes(deps: XmlInterfaceDeps): XmlRoute[] {
  const restObject = restObjectMaker(deps.xmlBase);
  return [
    {
      id: 'list',
      methods: ['GET'],
      path: '/list/:type',
      produces: 'text/xml',
      doc: 'The objects of a type the caller may view.',
      query: [
        { name: 'stylesheet', doc: 'true: refer to the default REST stylesheet', options: ['true', 'false'] },
        { name: 'search', doc: 'case-insensitive text in the business key or description' },
        { name: 'check', doc: 'export: only objects that can be exported', options: ['export', 'none', 'View'] },
      ],
      async handler(req, reply) {
        const type = definitionType(params(req).type ?? '');
        const queryValues = query(req);
        const stylesheet = flag(queryValues.stylesheet, 'stylesheet', false);
        const check = queryValues.check ?? 'none';
        if (!['export', 'none', 'view'].includes(check.toLowerCase()))
          throw invalid('check must be export, none or View');
        const search = (queryValues.search ?? '').toLowerCase();
        if (search.length > 200) throw invalid('search must be at most 200 characters');
        const build = async () => {
          const list = new RestListText();
          const pause = loopYielder(); // a list of thousands must not hold the event loop
          for await (const page of deps.objects.visibleSummaries(req.principal, type))
            for (const summary of page) {
              await pause();
              if (check.toLowerCase() === 'export' && !exportable(summary)) continue;
              if (
                search &&
                !`${type.name}:${summary.key}`.toLowerCase().includes(search) &&
                !(summary.description ?? '').toLowerCase().includes(search)
              )
                continue;
              list.add(restObject(type.name, summary.key, summary.description));
            }
          return Buffer.from(list.text(type.name, stylesheet ? `${deps.xmlBase}/stylesheet` : undefined));
        };
        const variant = JSON.stringify([check.toLowerCase(), search, stylesheet]);
        return reply.type(XML_TYPE).send(await deps.objects.cachedList(req.principal, type, variant, build));
      },
    },
    {
      id: 'stylesheet',
      methods: ['GET'],
      path: '/stylesheet',
      produces: 'text/xsl',
      doc: 'The default REST stylesheet that list?stylesheet=true refers to.',
      async handler(_req, reply) {
        return reply.type('text/xsl; charset=utf-8').send(LIST_STYLESHEET);
      },
    },
  ];
}

/** scripts-list and scripts-get: the libraries and script process definitions the caller may view. */
export function scriptRoutes(deps: XmlInterfaceDeps): XmlRoute[] {
  const restObject = restObjectMaker(deps.xmlBase);
  const scriptObjects = (req: FastifyRequest) => deps.objects.scripts(req.principal);
  return [
    {
      id: 'scripts-list',
      methods: ['GET'],
      path: '/scripts-list',
      produces: 'text/xml',
      doc: 'Libraries and script process definitions the caller may view.',
      async handler(req, reply) {
        const found = (await scriptObjects(req)).map((script) =>
          restObject(script.type, script.key, script.description),
        );
        return reply.type(XML_TYPE).send(restList('scripts', found));
      },
    },
    {
      id: 'scripts-get',
      methods: ['GET', 'POST'],
      path: '/scripts-get',
      produces: 'application/zip',
      doc: 'Libraries and script process definitions as one CAR file.',
      async handler(req, reply) {
        const roots = (await scriptObjects(req)).map((script) => ({ type: script.type, key: script.key }));
        // Sent as it is written (chunked): the whole CAR is never held.
        const car = await deps.exporter.exportStream(req.principal, roots, { references: false });
        return reply
          .type('application/zip')
          .header('Content-Disposition', 'attachment; filename="scripts.car"')
          .send(Readable.from(car));
      },
    },
  ];
}

/** Built-in objects belong to every server: they are not exported (check=export). */
const exportable = (summary: { protection: string | null }): boolean => summary.protection === null;
