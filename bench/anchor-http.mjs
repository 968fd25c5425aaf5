// The bare node:http anchor of the HTTP benchmarks: answers every request with one fixed body.
//
//   node bench/anchor-http.mjs <body-file> [content-type]
//
// It listens on an ephemeral port of 127.0.0.1 and prints one line `{"port":N}` once it is ready. Plain
// JavaScript on purpose: no loader (tsx) and no framework, so it is the cheapest a Node server can answer.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [bodyFile, contentType = 'application/json'] = process.argv.slice(2);
if (!bodyFile) {
  process.stderr.write('usage: node bench/anchor-http.mjs <body-file> [content-type]\n');
  process.exit(64);
}
const body = readFileSync(bodyFile);
const headers = { 'content-type': contentType, 'content-length': String(body.length) };

const server = createServer((_req, res) => {
  res.writeHead(200, headers);
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
});
const stop = () => process.exit(0);
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
