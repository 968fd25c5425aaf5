import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { notFound } from '../../errors.ts';
import { getType } from '../../model/registry.ts';
import type { CarExporter } from '../../services/car-export.ts';
import type { Session } from '../../services/sessions.ts';
import { TYPE_DESCRIPTIONS } from './type-descriptions.ts';

const HIDDEN = { schema: { hide: true } };

/**
 * What the dashboard's definition forms read besides the JSON interface: the registry's declarations of the
 * definition types (`ui/api/types`), and one object as a CAR file (`ui/api/car/<type>/<key>`), the XML interface's
 * `car` export (docs/architecture.md §14) reached with the session instead of basic auth, so a link downloads it.
 */
export function registerDefinitionRoutes(
  scope: FastifyInstance,
  ui: string,
  deps: { exporter: CarExporter; session: (req: FastifyRequest) => Promise<Session> },
): void {
  scope.get(`${ui}/api/types`, HIDDEN, async (req) => {
    await deps.session(req);
    return { types: TYPE_DESCRIPTIONS };
  });
  scope.get<{ Params: { type: string; key: string } }>(`${ui}/api/car/:type/:key`, HIDDEN, async (req, reply) => {
    const s = await deps.session(req);
    const type = getType(req.params.type);
    if (type?.storage !== 'definition') throw notFound('ObjectType', req.params.type);
    const key = req.params.key;
    const car = await deps.exporter.exportStream(s.principal, [{ type: type.name, key }], { references: false });
    const file = `${type.name}_${key}.car`.replace(/[^A-Za-z0-9_.-]/g, '_');
    return reply
      .type('application/zip')
      .header('Content-Disposition', `attachment; filename="${file}"`)
      .send(Readable.from(car));
  });
}
