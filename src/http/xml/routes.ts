// The XML interface's route table: every group of routes composed in the order of the interface's table, which is
// the order they are served in and described by the WADL and docs/interfaces.md (docs/architecture.md §2).
import { importRoutes } from './import-routes.ts';
import { listRoutes, scriptRoutes } from './list-routes.ts';
import { objectReadRoutes, objectStoreRoute } from './object-routes.ts';
import type { XmlInterfaceDeps, XmlRoute } from './route-types.ts';
import { serverRoutes } from './server-routes.ts';

export { ARCHIVE_BODY_LIMIT, XML_BODY_LIMIT, type XmlInterfaceDeps, type XmlRoute } from './route-types.ts';

/** The XML interface's services, in the order of its table. */
export function xmlRoutes(deps: XmlInterfaceDeps): XmlRoute[] {
  return [
    ...serverRoutes(deps),
    ...objectReadRoutes(deps),
    ...importRoutes(deps),
    objectStoreRoute(deps),
    ...listRoutes(deps),
    ...scriptRoutes(deps),
  ];
}
