// A second, optional anchor: fastify with default options answering every GET with one fixed body.
//
//   node bench/anchor-fastify.mjs <body-file> [content-type]
//
// Same protocol as anchor-http.mjs (prints `{"port":N}` once ready). It separates the cost of the framework
// from the cost of our own request path: ours ÷ fastify is what our code adds on top of fastify.
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';

const [bodyFile, contentType = 'application/json'] = process.argv.slice(2);
if (!bodyFile) {
  process.stderr.write('usage: node bench/anchor-fastify.mjs <body-file> [content-type]\n');
  process.exit(64);
}
const body = readFileSync(bodyFile, 'utf8');

const app = Fastify({ logger: false });
app.get('/*', (_req, reply) => {
  reply.header('content-type', contentType).send(body);
});
const address = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`${JSON.stringify({ port: Number(new URL(address).port) })}\n`);
const stop = () => process.exit(0);
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
