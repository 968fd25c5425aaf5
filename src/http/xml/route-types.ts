// What every group of the XML interface's routes shares: the services they use and the shape of one route, apart
// from the groups themselves so that they and the table composing them import no circle (docs/architecture.md §2).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Authenticator } from '../../services/auth.ts';
import type { CarExporter } from '../../services/car-export.ts';
import type { ImportService } from '../../services/car-import.ts';
import type { JobService } from '../../services/jobs.ts';
import type { ObjectService } from '../../services/objects.ts';

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
