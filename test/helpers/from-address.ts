import { request } from 'node:http';

export interface AddressedResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * One HTTP request over a real socket whose local end is bound to `localAddress`, so the server sees that client
 * address: any of 127.0.0.0/8 reaches a server listening on 127.0.0.1, which gives a test many distinct clients.
 */
export function requestFrom(
  localAddress: string,
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<AddressedResponse> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: options.method ?? 'GET',
        headers: options.headers ?? {},
        localAddress,
        agent: false,
        timeout: 60_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url} within 60 s`)));
    req.on('error', reject);
    req.end(options.body);
  });
}

/** `127.0.0.<n>`: a distinct loopback client address for each n in 2…254. */
export const loopback = (n: number): string => `127.0.0.${n}`;
