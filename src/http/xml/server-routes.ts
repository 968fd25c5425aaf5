// The XML interface's routes about the server itself rather than one object: a job's file, the interface's own
// description, the version and the library files (docs/architecture.md §2).
import { writeCar } from '../../car/archive-writer.ts';
import { invalid } from '../../errors.ts';
import { sendJobFile } from '../job-file-content.ts';
import { params } from './request-reading.ts';
import type { XmlInterfaceDeps, XmlRoute } from './route-types.ts';

/** jobfile, capabilitiesxml, version and api-libs, in the order of the interface's table. */
export function serverRoutes(deps: XmlInterfaceDeps): XmlRoute[] {
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
        return sendJobFile(req, reply, await deps.jobs.file(req.principal, id), deps.jobs);
      },
    },
    {
      id: 'capabilitiesxml',
      methods: ['GET'],
      path: '/capabilitiesxml',
      produces: 'application/vnd.sun.wadl+xml',
      doc: 'This description of the interface (WADL).',
      async handler(_req, reply) {
        return reply.type('text/xml; charset=utf-8').send(deps.wadl());
      },
    },
    {
      id: 'version',
      methods: ['GET'],
      path: '/version',
      produces: 'text/plain',
      doc: 'The server version, <dotted_version>-<date>-<time>_<digits>.',
      async handler(_req, reply) {
        return reply.type('text/plain; charset=utf-8').send(deps.version);
      },
    },
    {
      id: 'api-libs',
      methods: ['GET'],
      path: '/api-libs',
      produces: 'application/zip',
      doc: 'A zip of every library file the caller may view, as <library key>/<file>.',
      async handler(req, reply) {
        const entries = await deps.objects.ownedFiles(req.principal);
        return reply
          .type('application/zip')
          .header('Content-Disposition', 'attachment; filename="api-libs.zip"')
          .send(await writeCar(entries));
      },
    },
  ];
}
