// The XML interface's routes that import an archive (a CAR file, or a JAR into a library) as a
// System_Import_Archive job, answering at once or when the job ends (docs/architecture.md §2, §10).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { readCar } from '../../car/archive.ts';
import { writeCar } from '../../car/archive-writer.ts';
import { libraryEntryName } from '../../car/layout.ts';
import { invalid, MillraceError } from '../../errors.ts';
import { businessKey, parseKey } from '../../model/keys.ts';
import { IMPORT_NOT_PERMITTED, type ImportRequest } from '../../services/car-import.ts';
import { releaseForRequest } from '../../services/import-gate.ts';
import { importMessage, XML_TYPE } from './documents.ts';
import { bodyBytes, flag, header } from './request-reading.ts';
import { ARCHIVE_BODY_LIMIT, type XmlInterfaceDeps, type XmlRoute } from './route-types.ts';

const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);

/** car-put and jar-put, in the order of the interface's table. */
export function importRoutes(deps: XmlInterfaceDeps): XmlRoute[] {
  const startImport = importStarter(deps);
  return [
    {
      id: 'car-put',
      methods: ['PUT'],
      path: '/car',
      produces: 'text/xml',
      doc: 'Imports the CAR file in the body as a System_Import_Archive job.',
      bodyLimit: ARCHIVE_BODY_LIMIT,
      importsArchive: true,
      authorize: (req) => deps.imports.authorize(req.principal),
      headers: [
        { name: 'async', doc: 'true: answer once the import job is submitted', default: 'false' },
        { name: `X-${deps.vendor}-Description`, doc: 'description of the import' },
        { name: `X-${deps.vendor}-Ruleset`, doc: 'import rule set, <partition>.<name>' },
        { name: `X-${deps.vendor}-Ruleset-Properties`, doc: 'rule-set parameters, <p1>=<v1>[,<p2>=<v2>]*' },
        { name: `X-${deps.vendor}-TargetPartition`, doc: 'partition to import into' },
        {
          name: `X-${deps.vendor}-Signed-Car`,
          doc: 'true: refuse the archive unless signed by a trusted key',
          default: 'false',
        },
        { name: `X-${deps.vendor}-FileName`, doc: 'name of the CAR file in the import', default: 'carin.car' },
      ],
      async handler(req, reply) {
        const vendorHeader = (name: string) => header(req, `X-${deps.vendor}-${name}`);
        return startImport(req, reply, bodyBytes(req), {
          description: vendorHeader('Description'),
          ruleSet: vendorHeader('Ruleset'),
          ruleSetProperties: vendorHeader('Ruleset-Properties'),
          targetPartition: vendorHeader('TargetPartition'),
          signed: flag(vendorHeader('Signed-Car'), `X-${deps.vendor}-Signed-Car`, false),
          fileName: vendorHeader('FileName'),
        });
      },
    },
    {
      id: 'jar-put',
      methods: ['PUT'],
      path: '/jar',
      importsArchive: true,
      authorize: (req) => deps.imports.authorize(req.principal),
      produces: 'text/xml',
      doc: 'Stores the JAR file in the body into a library, as a System_Import_Archive job.',
      bodyLimit: ARCHIVE_BODY_LIMIT,
      headers: [
        { name: 'async', doc: 'true: answer once the import job is submitted', default: 'false' },
        { name: `X-${deps.vendor}-Library`, doc: 'library to store it in, <partition>.<name>' },
        { name: `X-${deps.vendor}-FileName`, doc: 'name the JAR file gets in the library' },
      ],
      async handler(req, reply) {
        const libraryHeader = header(req, `X-${deps.vendor}-Library`);
        const fileName = header(req, `X-${deps.vendor}-FileName`);
        if (!libraryHeader)
          throw invalid(`The X-${deps.vendor}-Library header is required: <partition>.<name> of a Library`);
        if (!fileName) throw invalid(`The X-${deps.vendor}-FileName header is required`);
        const library = parseKey('partitioned', libraryHeader);
        if (!library) throw invalid(`X-${deps.vendor}-Library "${libraryHeader}" is not a key <partition>.<name>`);
        if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}$/.test(fileName))
          throw invalid(`X-${deps.vendor}-FileName "${fileName}" must be a file name of letters, digits, _ . and -`);
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
  ];
}

/** Starts the import job and answers: at once with `async: true`, otherwise when it ends (an error if it failed). */
function importStarter(deps: XmlInterfaceDeps) {
  return async (req: FastifyRequest, reply: FastifyReply, bytes: Buffer, request: ImportRequest) => {
    const wait = !flag(header(req, 'async'), 'The async header', false);
    const job = await deps.imports.start(req.principal, bytes, request);
    releaseForRequest(req.raw);
    if (!wait) return reply.type(XML_TYPE).send(importMessage(job.jobId, job.status));
    const ended = await deps.imports.waitForEnd(job.jobId);
    if (ended.status !== 'Completed') {
      const why = ended.data.notes.at(-1) ?? `the import ended ${ended.status}`;
      const [status, code] = ended.returnCode === IMPORT_NOT_PERMITTED ? [403, 'FORBIDDEN'] : [422, 'UNPROCESSABLE'];
      throw new MillraceError(status, code, `Import job ${ended.jobId} ended ${ended.status}: ${why}`);
    }
    return reply.type(XML_TYPE).send(importMessage(ended.jobId, ended.status));
  };
}
