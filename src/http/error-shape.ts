import { STATUS_CODES } from 'node:http';
import { errorDocument, XML_TYPE } from './xml/documents.ts';

/**
 * The error record of whichever interface a URL belongs to: `<error>` for the XML interface (`/<context>/api-rest`),
 * `{"code", "message"}` for everything else. Used where no route's error handler runs: Node's parser errors and
 * timeouts, the router's own refusals (bad encoding, long parameters) and requests shed before routing.
 */
export function errorShape(
  url: string | undefined,
  xmlBase: string,
  status: number,
  message: string,
): { type: string; body: string } {
  const path = (url ?? '').split('?')[0] ?? '';
  if (path === xmlBase || path.startsWith(`${xmlBase}/`))
    return { type: XML_TYPE, body: errorDocument(status, message) };
  return { type: 'application/json; charset=utf-8', body: JSON.stringify({ code: String(status), message }) };
}

/** A whole HTTP/1.1 response that closes the connection, for writing straight onto a socket. */
export function rawErrorResponse(
  url: string | undefined,
  xmlBase: string,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): string {
  const { type, body } = errorShape(url, xmlBase, status, message);
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: ${type}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n${extra}Cache-Control: no-store\r\nConnection: close\r\n\r\n${body}`
  );
}

/** The request target of the first line of raw request bytes (`GET /x HTTP/1.1`), if it can be read. */
export function targetOf(raw: unknown): string | undefined {
  if (!Buffer.isBuffer(raw)) return undefined;
  const line = raw.subarray(0, Math.min(raw.length, 8192)).toString('latin1').split('\r\n')[0] ?? '';
  return /^[!-~]+ (\S+)/.exec(line)?.[1];
}
