import { createTransport } from 'nodemailer';

/** Where alert e-mails go out: MILLRACE_SMTP_URL and MILLRACE_MAIL_FROM (see src/config/config.ts). */
export interface SmtpSettings {
  host: string;
  port: number;
  /** TLS from the first byte (`smtps://`, usually port 465); otherwise STARTTLS when the server offers it. */
  secure?: boolean;
  user?: string;
  password?: string;
  from: string;
  timeoutMs?: number;
}

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export const DEFAULT_SMTP_TIMEOUT_MS = 30_000;

/** A line break in a header value would let the text add headers or recipients of its own. */
export function mailHeaderProblem(what: string, value: string): string | undefined {
  return /[\r\n\0]/.test(value) ? `the mail ${what} must not hold a line break` : undefined;
}

/** Sends one plain-text message; throws when the server refuses it or does not answer in time. No retries. */
export async function sendMail(smtp: SmtpSettings, msg: MailMessage): Promise<void> {
  const problem = mailHeaderProblem('recipient', msg.to) ?? mailHeaderProblem('subject', msg.subject);
  if (problem) throw new Error(problem);
  const timeout = smtp.timeoutMs ?? DEFAULT_SMTP_TIMEOUT_MS;
  const transport = createTransport({
    host: smtp.host,
    port: smtp.port,
    secure: smtp.secure ?? false,
    ...(smtp.user !== undefined ? { auth: { user: smtp.user, pass: smtp.password ?? '' } } : {}),
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
    // The message is plain text built by the server; it never needs to pull in files or URLs.
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  try {
    await transport.sendMail({
      from: smtp.from,
      // An address object, not a string: nodemailer would otherwise read a comma as a second recipient.
      to: { name: '', address: msg.to },
      subject: msg.subject,
      text: msg.text,
    });
  } finally {
    transport.close();
  }
}
