import { field, name, secret, string } from '../fields.ts';
import { defineType } from '../object-type.ts';

/**
 * A user and password for a system, so that jobs can run as a user without naming the password.
 * The password is write-only: encrypted at rest and never returned, CAR exports included (docs/architecture.md §10).
 */
export default defineType({
  name: 'Credential',
  description: 'A user and password valid on one system.',
  key: 'partitioned',
  fields: [
    field('Protocol', string(80), { default: 'login', description: 'How it is used, e.g. login, ssh, smb.' }),
    field('Endpoint', string(255), { description: 'The system or fully qualified host name where it is valid.' }),
    field('RealUser', string(255), { required: true, description: 'The user name on the endpoint.' }),
    field('Password', secret(1024)),
    field('VirtualUser', name(), { description: 'A logical user name that stays the same across environments.' }),
  ],
});
