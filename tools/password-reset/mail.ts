// The reset mail: to the user's own address, a link to the page that sets the new password
// (PUBLIC_BASE_URL/reset-password?token=...), sent by the system mailer through the outbox.
import { type MailMessage, safeSubject } from '../../core/mail.ts';

export function resetMail(input: { to: string; name: string; link: string }): MailMessage {
  return {
    to: input.to,
    subject: safeSubject('Reset your CRM password'),
    text: [
      `Hello ${input.name},`,
      '',
      `Someone (we hope you) asked to reset the password of the CRM account ${input.to}.`,
      'Choose a new password here; the link works once, for one hour:',
      '',
      input.link,
      '',
      'Signing in with the new password signs every other session of yours out.',
      'If you did not ask for this, ignore this mail: your password stays as it is.',
    ].join('\n'),
  };
}
