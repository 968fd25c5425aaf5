import { once } from 'node:events';
import { type AddressInfo, createServer, type Socket } from 'node:net';

export interface ReceivedMail {
  /** The MAIL FROM address. */
  from: string;
  /** The RCPT TO addresses. */
  to: string[];
  /** The message as sent after DATA (headers and body, CRLF line ends), dot-unstuffed. */
  data: string;
  /** The Subject header, unfolded, with RFC 2047 encoded words decoded. */
  subject: string;
  /** The message body after the header block. */
  body: string;
  /** The credentials given with AUTH PLAIN, if any. */
  auth?: { user: string; password: string };
}

export interface SmtpReceiver {
  host: string;
  port: number;
  messages: ReceivedMail[];
  close(): Promise<void>;
}

const decodeWord = (_w: string, charset: string, enc: string, text: string): string => {
  const bytes =
    enc.toUpperCase() === 'B'
      ? Buffer.from(text, 'base64')
      : Buffer.from(
          text
            .replace(/_/g, ' ')
            .replace(/=([0-9A-F]{2})/gi, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16))),
          'latin1',
        );
  return new TextDecoder(charset).decode(bytes);
};

function subjectOf(headers: string): string {
  const unfolded = headers.replace(/\r\n[ \t]+/g, ' ');
  const line = unfolded.split('\r\n').find((l) => /^subject:/i.test(l)) ?? '';
  return line
    .replace(/^subject:\s*/i, '')
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?([^?]+)\?([BQ])\?([^?]*)\?=/gi, decodeWord);
}

/**
 * A real SMTP server on 127.0.0.1 port 0, enough for a client such as nodemailer: EHLO/HELO, AUTH PLAIN,
 * MAIL FROM, RCPT TO, DATA (with dot-unstuffing), RSET, NOOP, QUIT. It accepts every message and keeps it.
 */
export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const messages: ReceivedMail[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    serve(socket, messages);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    host: '127.0.0.1',
    port: (server.address() as AddressInfo).port,
    messages,
    async close() {
      for (const s of sockets) s.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

function serve(socket: Socket, messages: ReceivedMail[]): void {
  const say = (line: string) => socket.write(`${line}\r\n`);
  let from: string | undefined;
  let to: string[] = [];
  let data: string[] | undefined; // set while reading DATA
  let auth: ReceivedMail['auth'];
  let buffered = '';
  const reset = () => {
    from = undefined;
    to = [];
    data = undefined;
  };
  const dataLine = (line: string) => {
    const lines = data as string[];
    if (line !== '.') return void lines.push(line.startsWith('..') ? line.slice(1) : line);
    const text = lines.join('\r\n');
    const split = text.indexOf('\r\n\r\n');
    const headers = split < 0 ? text : text.slice(0, split);
    messages.push({
      from: from as string,
      to,
      data: text,
      subject: subjectOf(headers),
      body: split < 0 ? '' : text.slice(split + 4),
      ...(auth ? { auth } : {}),
    });
    reset();
    say('250 2.0.0 queued');
  };
  const command = (line: string) => {
    const verb = (line.split(' ')[0] ?? '').toUpperCase();
    const arg = line.slice(verb.length).trim();
    const address = () => /<([^>]*)>/.exec(arg)?.[1] ?? arg.replace(/^(FROM|TO):\s*/i, '');
    switch (verb) {
      case 'EHLO':
        return say('250-localhost\r\n250-8BITMIME\r\n250 AUTH PLAIN');
      case 'HELO':
        return say('250 localhost');
      case 'AUTH': {
        const [mech, b64] = arg.split(' ');
        if (mech?.toUpperCase() !== 'PLAIN' || !b64) return say('504 5.5.4 only AUTH PLAIN <base64>');
        const [, user = '', password = ''] = Buffer.from(b64, 'base64').toString('utf8').split('\0');
        auth = { user, password };
        return say('235 2.7.0 authenticated');
      }
      case 'MAIL':
        reset();
        from = address();
        return say('250 2.1.0 ok');
      case 'RCPT':
        if (from === undefined) return say('503 5.5.1 MAIL first');
        to.push(address());
        return say('250 2.1.5 ok');
      case 'DATA':
        if (to.length === 0) return say('503 5.5.1 RCPT first');
        data = [];
        return say('354 end data with <CR><LF>.<CR><LF>');
      case 'RSET':
        reset();
        return say('250 2.0.0 ok');
      case 'NOOP':
        return say('250 2.0.0 ok');
      case 'QUIT':
        say('221 2.0.0 bye');
        return void socket.end();
      default:
        return say('502 5.5.2 not implemented');
    }
  };
  say('220 localhost ESMTP millrace-test');
  socket.setEncoding('utf8'); // keeps a character split across two chunks whole
  socket.on('data', (chunk: string) => {
    buffered += chunk;
    for (let i = buffered.indexOf('\r\n'); i >= 0; i = buffered.indexOf('\r\n')) {
      const line = buffered.slice(0, i);
      buffered = buffered.slice(i + 2);
      if (data) dataLine(line);
      else command(line);
    }
  });
}
