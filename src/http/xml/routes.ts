import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Authenticator } from '../../services/auth.ts';
import type { CarExporter } from '../../services/car-export.ts';
import type { ImportService } from '../../services/car-import.ts';
import type { JobService } from '../../services/jobs.ts';
import { authorizeStore, type ObjectService } from '../../services/objects.ts';
import { releaseForRequest } from '../../services/import-gate.ts';
import { readCar, writeCar } from '../../car/archive.ts';
import { libraryEntryName } from '../../car/layout.ts';
import { elementToBody, typeOfElement } from '../../car/object-xml.ts';
import { parseXml } from '../../car/xml.ts';
import { invalid, MillraceError, notFound, unsupportedMediaType } from '../../errors.ts';
import type { TypeName } from '../../model/fields.ts';
import { businessKey, parseKey } from '../../model/keys.ts';
import { getType } from '../../model/registry.ts';
import { IMPORT_NOT_PERMITTED, type ImportRequest } from '../../services/car-import.ts';
import { sendJobFile } from '../job-file-content.ts';
import {
  importMessage,
  LIST_STYLESHEET,
  objectMessage,
  RestListText,
  type RestObject,
  restList,
  XML_TYPE,
} from './documents.ts';
import { loopYielder } from '../../loop-yield.ts';

/** What the XML interface's services use. */
export interface XmlInterfaceDeps {
  auth: Authenticator;
  objects: ObjectService;
  jobs: JobService;
  exporter: CarExporter;
  imports: ImportService;
  logger: Logger;
  /** `<dotted_version>-<date>-<time>_<digits>`. */
  version: string;
  /** Header prefix `X-<vendor>-`. */
  vendor: string;
  /** Absolute path of the interface (`/<context>/api-rest`), for URLs in answers. */
  xmlBase: string;
  /** The WADL of the routes served (set by the plugin itself). */
  wadl(): string;
}

/** One service of the XML interface: how it is served, and how the WADL (capabilitiesxml) describes it. */
export interface XmlRoute {
  /** The service's name in the interface's table (`object`, `car-put`, …), the WADL method id. */
  id: string;
  methods: Array<'GET' | 'PUT' | 'POST'>;
  /** Fastify path under the interface's base. */
  path: string;
  produces: string;
  doc: string;
  query?: ReadonlyArray<{ name: string; doc: string; options?: readonly string[] }>;
  headers?: ReadonlyArray<{ name: string; doc: string; default?: string }>;
  /** Largest body accepted, for services that take one. */
  bodyLimit?: number;
  /** Takes an archive: waits for an import slot before its body is read (the global bound on import memory). */
  importsArchive?: boolean;
  /** The privilege checks that need no body, run before it is read (docs/architecture.md §10). */
  authorize?(req: FastifyRequest): unknown;
  handler(req: FastifyRequest, reply: FastifyReply): Promise<unknown>;
}

export const XML_BODY_LIMIT = 1024 * 1024;
export const ARCHIVE_BODY_LIMIT = 64 * 1024 * 1024;

type Params = Record<string, string>;
type Query = Record<string, string | undefined>;
const params = (req: FastifyRequest) => req.params as Params;
const query = (req: FastifyRequest) => req.query as Query;
const header = (req: FastifyRequest, name: string): string | undefined => {
  const v = req.headers[name.toLowerCase()];
  return typeof v === 'string' ? v : undefined;
};

/** `true`/`false` (case-insensitive) of a header or query parameter; 400 naming it otherwise. */
function flag(value: string | undefined, name: string, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  const v = value.toLowerCase();
  if (v !== 'true' && v !== 'false') throw invalid(`${name} must be true or false`);
  return v === 'true';
}

const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
const bodyBytes = (req: FastifyRequest): Buffer => (Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0));

/** XML bodies: only XML content types, and only UTF-8 (docs/architecture.md §10). */
function xmlBody(req: FastifyRequest): Buffer {
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  const [media, ...rest] = type.split(';').map((s) => s.trim());
  if (media !== 'application/xml' && media !== 'text/xml')
    throw unsupportedMediaType('Send the object with Content-Type application/xml or text/xml');
  const charset = rest
    .find((r) => r.startsWith('charset='))
    ?.slice(8)
    .replace(/"/g, '');
  if (charset && charset !== 'utf-8' && charset !== 'utf8')
    throw unsupportedMediaType(`The charset must be UTF-8, not ${charset}`);
  const body = bodyBytes(req);
  if (body.length === 0) throw invalid('The body is empty: send the XML of an object');
  return body;
}

/** The XML interface's services, in the order of its table. */
export function xmlRoutes(d: XmlInterfaceDeps): XmlRoute[] {
  const objectUrl = (type: string, key: string) => `${d.xmlBase}/object/${type}/${key}`;
  const rest = (type: TypeName, key: string, description: unknown): RestObject => ({
    businessKey: businessKey(type, key),
    url: objectUrl(type, key),
    description: typeof description === 'string' ? description : null,
  });

  const startImport = async (req: FastifyRequest, reply: FastifyReply, bytes: Buffer, request: ImportRequest) => {
    const wait = !flag(header(req, 'async'), 'The async header', false);
    const job = await d.imports.start(req.principal, bytes, request);
    releaseForRequest(req.raw);
    if (!wait) return reply.type(XML_TYPE).send(importMessage(job.jobId, job.status));
    const ended = await d.imports.waitForEnd(job.jobId);
    if (ended.status !== 'Completed') {
      const why = ended.data.notes.at(-1) ?? `the import ended ${ended.status}`;
      const [status, code] = ended.returnCode === IMPORT_NOT_PERMITTED ? [403, 'FORBIDDEN'] : [422, 'UNPROCESSABLE'];
      throw new MillraceError(status, code, `Import job ${ended.jobId} ended ${ended.status}: ${why}`);
    }
    return reply.type(XML_TYPE).send(importMessage(ended.jobId, ended.status));
  };

  const definitionType = (name: string) => {
    const type = getType(name);
    if (type?.storage !== 'definition') throw notFound('ObjectType', name);
    return type;
  };

  const scriptObjects = (req: FastifyRequest) => d.objects.scripts(req.principal);

  return [
    {
      id: 'jobfile',
      methods: ['GET'],
      path: '/jobfile/:id',
      produces: 'application/octet-stream',
      doc: 'Contents of a job file, by its uniqueId (a positive integer); Range: bytes=N- follows a growing file.',
      async handler(req, reply) {
        const id = params(req).id ?? '';
        if (!/^[1-9][0-9]{0,15}$/.test(id)) throw invalid(`The job file id "${id}" is not a positive integer`);
        return sendJobFile(req, reply, await d.jobs.file(req.principal, id), d.jobs);
      },
    },
    {
      id: 'capabilitiesxml',
      methods: ['GET'],
      path: '/capabilitiesxml',
      produces: 'application/vnd.sun.wadl+xml',
      doc: 'This description of the interface (WADL).',
      async handler(_req, reply) {
        return reply.type('text/xml; charset=utf-8').send(d.wadl());
      },
    },
    {
      id: 'version',
      methods: ['GET'],
      path: '/version',
      produces: 'text/plain',
      doc: 'The server version, <dotted_version>-<date>-<time>_<digits>.',
      async handler(_req, reply) {
        return reply.type('text/plain; charset=utf-8').send(d.version);
      },
    },
    {
      id: 'api-libs',
      methods: ['GET'],
      path: '/api-libs',
      produces: 'application/zip',
      doc: 'A zip of every library file the caller may view, as <library key>/<file>.',
      async handler(req, reply) {
        const entries = await d.objects.ownedFiles(req.principal);
        return reply
          .type('application/zip')
          .header('Content-Disposition', 'attachment; filename="api-libs.zip"')
          .send(await writeCar(entries));
      },
    },
    {
      id: 'object',
      methods: ['GET'],
      path: '/object/:type/:key',
      produces: 'text/xml',
      doc: 'An object as XML: /object/<object_type>/<partition>.<object_name>.',
      async handler(req, reply) {
        const type = definitionType(params(req).type ?? '');
        return reply.type(XML_TYPE).send(await d.objects.getXml(req.principal, type, params(req).key ?? ''));
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
        const car = await d.exporter.exportStream(req.principal, [{ type: type.name, key }], { references });
        const file = `${type.name}_${key}.car`.replace(/[^A-Za-z0-9_.-]/g, '_');
        return reply
          .type('application/zip')
          .header('Content-Disposition', `attachment; filename="${file}"`)
          .send(Readable.from(car));
      },
    },
    {
      id: 'car-put',
      methods: ['PUT'],
      path: '/car',
      produces: 'text/xml',
      doc: 'Imports the CAR file in the body as a System_Import_Archive job.',
      bodyLimit: ARCHIVE_BODY_LIMIT,
      importsArchive: true,
      authorize: (req) => d.imports.authorize(req.principal),
      headers: [
        { name: 'async', doc: 'true: answer once the import job is submitted', default: 'false' },
        { name: `X-${d.vendor}-Description`, doc: 'description of the import' },
        { name: `X-${d.vendor}-Ruleset`, doc: 'import rule set, <partition>.<name>' },
        { name: `X-${d.vendor}-Ruleset-Properties`, doc: 'rule-set parameters, <p1>=<v1>[,<p2>=<v2>]*' },
        { name: `X-${d.vendor}-TargetPartition`, doc: 'partition to import into' },
        {
          name: `X-${d.vendor}-Signed-Car`,
          doc: 'true: refuse the archive unless signed by a trusted key',
          default: 'false',
        },
        { name: `X-${d.vendor}-FileName`, doc: 'name of the CAR file in the import', default: 'carin.car' },
      ],
      async handler(req, reply) {
        const h = (name: string) => header(req, `X-${d.vendor}-${name}`);
        return startImport(req, reply, bodyBytes(req), {
          description: h('Description'),
          ruleSet: h('Ruleset'),
          ruleSetProperties: h('Ruleset-Properties'),
          targetPartition: h('TargetPartition'),
          signed: flag(h('Signed-Car'), `X-${d.vendor}-Signed-Car`, false),
          fileName: h('FileName'),
        });
      },
    },
    {
      id: 'jar-put',
      methods: ['PUT'],
      path: '/jar',
      importsArchive: true,
      authorize: (req) => d.imports.authorize(req.principal),
      produces: 'text/xml',
      doc: 'Stores the JAR file in the body into a library, as a System_Import_Archive job.',
      bodyLimit: ARCHIVE_BODY_LIMIT,
      headers: [
        { name: 'async', doc: 'true: answer once the import job is submitted', default: 'false' },
        { name: `X-${d.vendor}-Library`, doc: 'library to store it in, <partition>.<name>' },
        { name: `X-${d.vendor}-FileName`, doc: 'name the JAR file gets in the library' },
      ],
      async handler(req, reply) {
        const libraryHeader = header(req, `X-${d.vendor}-Library`);
        const fileName = header(req, `X-${d.vendor}-FileName`);
        if (!libraryHeader)
          throw invalid(`The X-${d.vendor}-Library header is required: <partition>.<name> of a Library`);
        if (!fileName) throw invalid(`The X-${d.vendor}-FileName header is required`);
        const library = parseKey('partitioned', libraryHeader);
        if (!library) throw invalid(`X-${d.vendor}-Library "${libraryHeader}" is not a key <partition>.<name>`);
        if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}$/.test(fileName))
          throw invalid(`X-${d.vendor}-FileName "${fileName}" must be a file name of letters, digits, _ . and -`);
        const jar = bodyBytes(req);
        if (jar.length < 22 || !jar.subarray(0, 4).equals(ZIP_MAGIC)) throw invalid('The body is not a JAR (zip) file');
        // Read once with the archive caps (never expanded anywhere): a broken or hostile jar is refused here.
        await readCar(jar).catch((e: unknown) => {
          throw invalid(`The body is not a readable JAR (zip) file: ${e instanceof Error ? e.message : String(e)}`);
        });
        // A jar is carried as an opaque library entry of a one-entry CAR: the same job, checks and log as car-put.
        const car = await writeCar([{ name: libraryEntryName(library.key, fileName), data: jar }]);
        return startImport(req, reply, car, {
          fileName,
          description: `Store ${fileName} in ${businessKey('Library', library.key)}`,
        });
      },
    },
    {
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
        const { saved, created } = await d.objects.put(req.principal, type, key, body);
        const savedKey = String(saved.businessKey).slice(type.name.length + 1);
        return reply
          .code(created ? 201 : 200)
          .type(XML_TYPE)
          .send(objectMessage(rest(type.name, savedKey, saved.Description)));
      },
    },
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
        const q = query(req);
        const stylesheet = flag(q.stylesheet, 'stylesheet', false);
        const check = q.check ?? 'none';
        if (!['export', 'none', 'view'].includes(check.toLowerCase()))
          throw invalid('check must be export, none or View');
        const search = (q.search ?? '').toLowerCase();
        if (search.length > 200) throw invalid('search must be at most 200 characters');
        const build = async () => {
          const list = new RestListText();
          const pause = loopYielder(); // a list of thousands must not hold the event loop
          for await (const page of d.objects.visibleSummaries(req.principal, type))
            for (const o of page) {
              await pause();
              if (check.toLowerCase() === 'export' && !exportable(o)) continue;
              if (
                search &&
                !`${type.name}:${o.key}`.toLowerCase().includes(search) &&
                !(o.description ?? '').toLowerCase().includes(search)
              )
                continue;
              list.add(rest(type.name, o.key, o.description));
            }
          return Buffer.from(list.text(type.name, stylesheet ? `${d.xmlBase}/stylesheet` : undefined));
        };
        const variant = JSON.stringify([check.toLowerCase(), search, stylesheet]);
        return reply.type(XML_TYPE).send(await d.objects.cachedList(req.principal, type, variant, build));
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
    {
      id: 'scripts-list',
      methods: ['GET'],
      path: '/scripts-list',
      produces: 'text/xml',
      doc: 'Libraries and script process definitions the caller may view.',
      async handler(req, reply) {
        const found = (await scriptObjects(req)).map((o) => rest(o.type, o.key, o.description));
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
        const roots = (await scriptObjects(req)).map((o) => ({ type: o.type, key: o.key }));
        // Sent as it is written (chunked): the whole CAR is never held.
        const car = await d.exporter.exportStream(req.principal, roots, { references: false });
        return reply
          .type('application/zip')
          .header('Content-Disposition', 'attachment; filename="scripts.car"')
          .send(Readable.from(car));
      },
    },
  ];
}

/** Definition types that hold a script (custom script process definitions). */

/** Built-in objects belong to every server: they are not exported (check=export). */
const exportable = (o: { protection: string | null }): boolean => o.protection === null;

/** The key an object body names by its identity fields. */
function keyOf(shape: string, body: Record<string, unknown>): string | undefined {
  const s = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  if (shape === 'name') return s(body.Name);
  if (shape === 'partitioned') return s(body.Name) && `${s(body.Partition) ?? 'GLOBAL'}.${s(body.Name)}`;
  if (shape === 'queueProvider')
    return s(body.ProcessServer) && s(body.Queue) && `${s(body.ProcessServer)}.${s(body.Queue)}`;
  return undefined;
}
